package io.tensorbus.spi.contract;

import io.tensorbus.DType;
import io.tensorbus.spi.DeviceBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Host buffers for the contract tests: allocation, element access for every {@link DType} (little-endian, as
 * the wire and the host reductions), and the test's own float16/bfloat16 conversions, written here rather
 * than borrowed from the code under test.
 */
public final class Buffers {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfDouble D = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private Buffers() {
    }

    /** A zeroed, 64-byte aligned host buffer of {@code dtype} and {@code shape}. */
    public static DeviceBuffer alloc(DType dtype, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, n * dtype.byteSize()), 64)
                .asSlice(0, n * dtype.byteSize());
        return DeviceBuffer.host(s, dtype, shape);
    }

    /** A one-dimensional buffer of {@code n} elements. */
    public static DeviceBuffer vector(DType dtype, long n) {
        return alloc(dtype, n);
    }

    /** A buffer with the same dtype, shape and bytes as {@code b}. */
    public static DeviceBuffer copy(DeviceBuffer b) {
        DeviceBuffer c = alloc(b.dtype(), b.shape());
        c.segment().copyFrom(b.segment());
        return c;
    }

    /** Writes element {@code i} as a floating-point value (integers and bools from the value, exactly). */
    public static void put(DeviceBuffer b, long i, double v) {
        MemorySegment s = b.segment();
        switch (b.dtype()) {
            case FLOAT32 -> s.setAtIndex(F, i, (float) v);
            case FLOAT64 -> s.setAtIndex(D, i, v);
            case FLOAT16 -> s.setAtIndex(S, i, toFloat16((float) v));
            case BFLOAT16 -> s.setAtIndex(S, i, toBFloat16((float) v));
            case INT32 -> s.setAtIndex(I, i, (int) v);
            case INT64 -> s.setAtIndex(L, i, (long) v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
        }
    }

    /** Writes element {@code i} of an integer or bool buffer (bool: non-zero is true). */
    public static void putLong(DeviceBuffer b, long i, long v) {
        MemorySegment s = b.segment();
        switch (b.dtype()) {
            case INT32 -> s.setAtIndex(I, i, (int) v);
            case INT64 -> s.setAtIndex(L, i, v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
            default -> put(b, i, v);
        }
    }

    /** Element {@code i} as a double (integers exactly up to 2^53). */
    public static double get(DeviceBuffer b, long i) {
        MemorySegment s = b.segment();
        return switch (b.dtype()) {
            case FLOAT32 -> s.getAtIndex(F, i);
            case FLOAT64 -> s.getAtIndex(D, i);
            case FLOAT16 -> fromFloat16(s.getAtIndex(S, i));
            case BFLOAT16 -> fromBFloat16(s.getAtIndex(S, i));
            case INT32 -> s.getAtIndex(I, i);
            case INT64 -> s.getAtIndex(L, i);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, i);
        };
    }

    /** Element {@code i} of an integer or bool buffer, exactly. */
    public static long getLong(DeviceBuffer b, long i) {
        MemorySegment s = b.segment();
        return switch (b.dtype()) {
            case INT32 -> s.getAtIndex(I, i);
            case INT64 -> s.getAtIndex(L, i);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, i);
            default -> (long) get(b, i);
        };
    }

    /** The value {@code v} rounded to what {@code dtype} stores, as a double (the identity for integers). */
    public static double round(DType dtype, double v) {
        return switch (dtype) {
            case FLOAT32 -> (float) v;
            case FLOAT64 -> v;
            case FLOAT16 -> fromFloat16(toFloat16((float) v));
            case BFLOAT16 -> fromBFloat16(toBFloat16((float) v));
            case INT32 -> (int) v;
            case INT64 -> (long) v;
            case BOOL -> v != 0 ? 1 : 0;
        };
    }

    /** The index of the first byte where {@code a} and {@code b} differ, or -1 when they are identical. */
    public static long mismatch(DeviceBuffer a, DeviceBuffer b) {
        return a.segment().mismatch(b.segment());
    }

    /** IEEE half precision, round to nearest even (the JDK's conversion; the backend may use another). */
    static short toFloat16(float f) {
        return Float.floatToFloat16(f);
    }

    static float fromFloat16(short h) {
        return Float.float16ToFloat(h);
    }

    /** bfloat16: the upper half of a float32, rounded to nearest even; NaN stays NaN. */
    static short toBFloat16(float f) {
        if (Float.isNaN(f)) {
            return (short) 0x7fc0;
        }
        int bits = Float.floatToRawIntBits(f);
        int lsb = (bits >>> 16) & 1;
        return (short) ((bits + 0x7fff + lsb) >>> 16);
    }

    static float fromBFloat16(short b) {
        return Float.intBitsToFloat((b & 0xffff) << 16);
    }
}
