package io.tensorbus.spi.support;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The element-wise reductions of collectives over host memory, written once for every backend that reduces
 * on the CPU: {@code acc[i] = acc[i] op src[i]}. Half-precision dtypes are combined in float32 and rounded
 * back, as gloo does. {@link ReduceOp#AVG} reduces as a sum; {@link #divide} finishes it.
 */
public final class HostReductions {
    private static final VectorSpecies<Float> FS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> DS = DoubleVector.SPECIES_PREFERRED;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfDouble D = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    /** The staging block for heap operands, in bytes: a multiple of every element size. */
    private static final long STAGE_BYTES = 64 * 1024;
    /** Per thread, two native blocks that heap operands are copied through (accumulator, source). */
    private static final ThreadLocal<MemorySegment[]> STAGE = ThreadLocal.withInitial(() -> {
        Arena arena = Arena.ofAuto();
        return new MemorySegment[] {arena.allocate(STAGE_BYTES, 64), arena.allocate(STAGE_BYTES, 64)};
    });

    private HostReductions() {
    }

    /**
     * Combines {@code src} into {@code acc} element by element.
     *
     * @param op the reduction ({@link ReduceOp#AVG} sums)
     * @param dtype the element type of both segments
     * @param acc the accumulator, read and written
     * @param src the other operand, the same size as {@code acc}
     * @throws IllegalArgumentException when the sizes differ or {@code op} is not defined for {@code dtype}
     */
    public static void reduceInto(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src) {
        if (acc.byteSize() != src.byteSize()) {
            throw new IllegalArgumentException("reduce of " + acc.byteSize() + " bytes with " + src.byteSize());
        }
        op.checkSupports(dtype);
        if (acc.isNative() && src.isNative()) {
            reduceNative(op, dtype, acc, src);
        } else {
            reduceStaged(op, dtype, acc, src);
        }
    }

    /**
     * Combines {@code src} into {@code acc} and writes the result into {@code src} as well: bit for bit
     * {@link #reduceInto} followed by a copy of {@code acc} into {@code src}, what an all-reduce between two buffers
     * of one process does. A float32 sum of native segments goes in one pass, which streams each operand through the
     * cache once rather than twice; the other operations and dtypes take the two steps.
     *
     * @param op the reduction ({@link ReduceOp#AVG} sums)
     * @param dtype the element type of both segments
     * @param acc the accumulator, read and written
     * @param src the other operand, written with the result; the same size as {@code acc} and apart from it
     * @throws IllegalArgumentException when the sizes differ or {@code op} is not defined for {@code dtype}
     */
    public static void reduceIntoBoth(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src) {
        if (dtype == DType.FLOAT32 && op.type() == ReduceOp.Type.SUM && acc.isNative() && src.isNative()
                && acc.byteSize() == src.byteSize()) {
            floatSumsIntoBoth(acc, src, acc.byteSize() / 4);
        } else {
            reduceInto(op, dtype, acc, src);
            src.copyFrom(acc);
        }
    }

    private static void floatSumsIntoBoth(MemorySegment acc, MemorySegment src, long n) {
        long bound = FS.loopBound(n);
        for (long i = 0; i < bound; i += FS.length()) {
            FloatVector sum = floatAt(acc, i).add(floatAt(src, i));
            sum.intoMemorySegment(acc, i * 4, LE);
            sum.intoMemorySegment(src, i * 4, LE);
        }
        for (long i = bound; i < n; i++) {
            float sum = acc.getAtIndex(F, i) + src.getAtIndex(F, i);
            acc.setAtIndex(F, i, sum);
            src.setAtIndex(F, i, sum);
        }
    }

    /**
     * Heap operands (small buffers of a transport, Java arrays) go through native staging blocks, so that the
     * vector loops only ever see native memory: a loop that has seen both kinds was measured to compile to half
     * the speed for native memory too (5 against 10-15 GB/s for float32 sums), and large reductions are native.
     */
    private static void reduceStaged(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src) {
        MemorySegment[] stage = STAGE.get();
        for (long at = 0; at < acc.byteSize(); at += STAGE_BYTES) {
            long len = Math.min(STAGE_BYTES, acc.byteSize() - at);
            MemorySegment a = acc.isNative() ? acc.asSlice(at, len)
                    : stage[0].asSlice(0, len).copyFrom(acc.asSlice(at, len));
            MemorySegment s = src.isNative() ? src.asSlice(at, len)
                    : stage[1].asSlice(0, len).copyFrom(src.asSlice(at, len));
            reduceNative(op, dtype, a, s);
            if (!acc.isNative()) {
                acc.asSlice(at, len).copyFrom(a);
            }
        }
    }

    private static void reduceNative(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src) {
        long n = acc.byteSize() / dtype.byteSize();
        switch (dtype) {
            case FLOAT32 -> floats(op, acc, src, n);
            case FLOAT64 -> doubles(op, acc, src, n);
            case FLOAT16, BFLOAT16 -> halves(op, dtype, acc, src, n);
            case INT32 -> ints(op, acc, src, n);
            case INT64 -> longs(op, acc, src, n);
            case BOOL -> bools(op, acc, src, n);
        }
    }

    /**
     * Divides every element by {@code divisor}: the last step of {@link ReduceOp#AVG}.
     *
     * @throws IllegalArgumentException for a non-floating-point dtype
     */
    public static void divide(DType dtype, MemorySegment acc, int divisor) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("cannot average " + dtype);
        }
        long n = acc.byteSize() / dtype.byteSize();
        switch (dtype) {
            case FLOAT32 -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F, i, acc.getAtIndex(F, i) / divisor);
                }
            }
            case FLOAT64 -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(D, i, acc.getAtIndex(D, i) / divisor);
                }
            }
            default -> {
                for (long i = 0; i < n; i++) {
                    setHalf(dtype, acc, i, getHalf(dtype, acc, i) / divisor);
                }
            }
        }
    }

    private static void floats(ReduceOp op, MemorySegment acc, MemorySegment src, long n) {
        // One loop per operator: the Vector API compiles lanewise(...) to SIMD only for a constant operator.
        long bound = FS.loopBound(n);
        long step = FS.length();
        switch (op.type()) {
            case SUM, AVG -> {
                for (long i = 0; i < bound; i += step) {
                    floatAt(acc, i).add(floatAt(src, i)).intoMemorySegment(acc, i * 4, LE);
                }
            }
            case PRODUCT -> {
                for (long i = 0; i < bound; i += step) {
                    floatAt(acc, i).mul(floatAt(src, i)).intoMemorySegment(acc, i * 4, LE);
                }
            }
            case MAX -> {
                for (long i = 0; i < bound; i += step) {
                    floatAt(acc, i).lanewise(VectorOperators.MAX, floatAt(src, i)).intoMemorySegment(acc, i * 4, LE);
                }
            }
            case MIN -> {
                for (long i = 0; i < bound; i += step) {
                    floatAt(acc, i).lanewise(VectorOperators.MIN, floatAt(src, i)).intoMemorySegment(acc, i * 4, LE);
                }
            }
            default -> throw new IllegalArgumentException(op + " on floating point");
        }
        for (long i = bound; i < n; i++) {
            acc.setAtIndex(F, i, (float) scalar(op, acc.getAtIndex(F, i), src.getAtIndex(F, i)));
        }
    }

    private static FloatVector floatAt(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(FS, s, i * 4, LE);
    }

    private static DoubleVector doubleAt(MemorySegment s, long i) {
        return DoubleVector.fromMemorySegment(DS, s, i * 8, LE);
    }

    private static void doubles(ReduceOp op, MemorySegment acc, MemorySegment src, long n) {
        long bound = DS.loopBound(n);
        long step = DS.length();
        switch (op.type()) {
            case SUM, AVG -> {
                for (long i = 0; i < bound; i += step) {
                    doubleAt(acc, i).add(doubleAt(src, i)).intoMemorySegment(acc, i * 8, LE);
                }
            }
            case PRODUCT -> {
                for (long i = 0; i < bound; i += step) {
                    doubleAt(acc, i).mul(doubleAt(src, i)).intoMemorySegment(acc, i * 8, LE);
                }
            }
            case MAX -> {
                for (long i = 0; i < bound; i += step) {
                    doubleAt(acc, i).lanewise(VectorOperators.MAX, doubleAt(src, i)).intoMemorySegment(acc, i * 8, LE);
                }
            }
            case MIN -> {
                for (long i = 0; i < bound; i += step) {
                    doubleAt(acc, i).lanewise(VectorOperators.MIN, doubleAt(src, i)).intoMemorySegment(acc, i * 8, LE);
                }
            }
            default -> throw new IllegalArgumentException(op + " on floating point");
        }
        for (long i = bound; i < n; i++) {
            acc.setAtIndex(D, i, scalar(op, acc.getAtIndex(D, i), src.getAtIndex(D, i)));
        }
    }

    private static double scalar(ReduceOp op, double a, double b) {
        return switch (op.type()) {
            case SUM, AVG -> a + b;
            case PRODUCT -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(op + " on floating point");
        };
    }

    private static void halves(ReduceOp op, DType dtype, MemorySegment acc, MemorySegment src, long n) {
        for (long i = 0; i < n; i++) {
            setHalf(dtype, acc, i, (float) scalar(op, getHalf(dtype, acc, i), getHalf(dtype, src, i)));
        }
    }

    private static float getHalf(DType dtype, MemorySegment s, long i) {
        short bits = s.getAtIndex(S, i);
        return dtype == DType.FLOAT16 ? Float.float16ToFloat(bits) : Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    private static void setHalf(DType dtype, MemorySegment s, long i, float v) {
        s.setAtIndex(S, i, dtype == DType.FLOAT16 ? Float.floatToFloat16(v) : toBFloat16(v));
    }

    /** Rounds to nearest even, keeping NaN a NaN, as PyTorch's bfloat16 conversion. */
    private static short toBFloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) 0x7fc0;
        }
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    private static long integer(ReduceOp op, long a, long b) {
        return switch (op.type()) {
            case SUM -> a + b;
            case PRODUCT -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case BAND -> a & b;
            case BOR -> a | b;
            case BXOR -> a ^ b;
            case AVG, PREMUL_SUM -> throw new IllegalArgumentException(op + " on an integer dtype");
        };
    }

    private static void ints(ReduceOp op, MemorySegment acc, MemorySegment src, long n) {
        for (long i = 0; i < n; i++) {
            acc.setAtIndex(I, i, (int) integer(op, acc.getAtIndex(I, i), src.getAtIndex(I, i)));
        }
    }

    private static void longs(ReduceOp op, MemorySegment acc, MemorySegment src, long n) {
        for (long i = 0; i < n; i++) {
            acc.setAtIndex(L, i, integer(op, acc.getAtIndex(L, i), src.getAtIndex(L, i)));
        }
    }

    /** Bools reduce as 0/1 integers: SUM and MAX are "or", PRODUCT and MIN are "and", as in PyTorch. */
    private static void bools(ReduceOp op, MemorySegment acc, MemorySegment src, long n) {
        for (long i = 0; i < n; i++) {
            long a = acc.get(ValueLayout.JAVA_BYTE, i) != 0 ? 1 : 0;
            long b = src.get(ValueLayout.JAVA_BYTE, i) != 0 ? 1 : 0;
            long r = switch (op.type()) {
                case SUM, MAX, BOR -> a | b;
                case PRODUCT, MIN, BAND -> a & b;
                case BXOR -> a ^ b;
                case AVG, PREMUL_SUM -> throw new IllegalArgumentException(op + " on bool");
            };
            acc.set(ValueLayout.JAVA_BYTE, i, (byte) r);
        }
    }
}
