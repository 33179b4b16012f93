package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * MIN and MAX of floating-point elements as gloo computes them ({@code gloo::min} and {@code gloo::max} of
 * {@code math.h}, which ProcessGroupGloo reduces with): {@code c = std::min(a, b)} with {@code a} this rank's
 * accumulated value and {@code b} the peer's, that is {@code b < a ? b : a}, and {@code std::max(a, b)},
 * {@code a < b ? b : a}. Where a NaN or zeros of both signs meet, the comparison is false and this rank's value
 * stays, where Java's {@code Math.min} would answer the NaN or -0; a mixed job's result must be the one its PyTorch
 * ranks compute, bit for bit. The chosen element is copied as its bits, so half-precision values are not rounded.
 */
final class GlooMinMax {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfDouble D = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private GlooMinMax() {
    }

    /** True for MIN and MAX of a floating-point dtype, where gloo's rule differs from {@code Math.min}. */
    static boolean handles(ReduceOp op, DType dtype) {
        ReduceOp.Type t = op.type();
        return (t == ReduceOp.Type.MIN || t == ReduceOp.Type.MAX) && dtype.isFloatingPoint();
    }

    /** {@code acc[i] = gloo's min or max of (acc[i], src[i])}; the segments have the same size. */
    static void reduceInto(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src) {
        if (!handles(op, dtype)) {
            throw new IllegalArgumentException(op + " of " + dtype + " is not gloo's floating-point rule");
        }
        boolean min = op.type() == ReduceOp.Type.MIN;
        long size = dtype.byteSize();
        long n = acc.byteSize() / size;
        for (long i = 0; i < n; i++) {
            double a = value(dtype, acc, i);
            double b = value(dtype, src, i);
            if (min ? b < a : a < b) {
                MemorySegment.copy(src, i * size, acc, i * size, size);
            }
        }
    }

    /** Element {@code i} widened to a double, which keeps every order and NaN of the narrower types. */
    private static double value(DType dtype, MemorySegment s, long i) {
        return switch (dtype) {
            case FLOAT32 -> s.getAtIndex(F, i);
            case FLOAT64 -> s.getAtIndex(D, i);
            default -> half(dtype, s.getAtIndex(S, i));
        };
    }

    private static float half(DType dtype, short bits) {
        return dtype == DType.FLOAT16 ? Float.float16ToFloat(bits) : Float.intBitsToFloat((bits & 0xffff) << 16);
    }
}
