package io.tensorbus.internal.tensor;

import io.tensorbus.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Reads and writes single elements of any dtype as double or long; used by generic (non hot) paths. */
public final class Access {
    private Access() {
    }

    /** Reads element {@code index} (in elements, not bytes) as a double. */
    public static double getDouble(MemorySegment s, DType t, long index) {
        return switch (t) {
            case FLOAT32 -> s.getAtIndex(ValueLayout.JAVA_FLOAT, index);
            case FLOAT64 -> s.getAtIndex(ValueLayout.JAVA_DOUBLE, index);
            case FLOAT16 -> Float.float16ToFloat(s.getAtIndex(ValueLayout.JAVA_SHORT, index));
            case BFLOAT16 -> Float.intBitsToFloat((s.getAtIndex(ValueLayout.JAVA_SHORT, index) & 0xffff) << 16);
            case INT32 -> s.getAtIndex(ValueLayout.JAVA_INT, index);
            case INT64 -> s.getAtIndex(ValueLayout.JAVA_LONG, index);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, index) != 0 ? 1.0 : 0.0;
        };
    }

    /** Reads element {@code index} as a long (floats truncate toward zero, as a C cast). */
    public static long getLong(MemorySegment s, DType t, long index) {
        return switch (t) {
            case INT32 -> s.getAtIndex(ValueLayout.JAVA_INT, index);
            case INT64 -> s.getAtIndex(ValueLayout.JAVA_LONG, index);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, index) != 0 ? 1 : 0;
            default -> (long) getDouble(s, t, index);
        };
    }

    /** Writes a double into element {@code index}, converting to the dtype (integers truncate). */
    public static void setDouble(MemorySegment s, DType t, long index, double v) {
        switch (t) {
            case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, index, (float) v);
            case FLOAT64 -> s.setAtIndex(ValueLayout.JAVA_DOUBLE, index, v);
            case FLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT, index, Float.floatToFloat16((float) v));
            case BFLOAT16 -> s.setAtIndex(ValueLayout.JAVA_SHORT, index, toBFloat16((float) v));
            case INT32 -> s.setAtIndex(ValueLayout.JAVA_INT, index, (int) (long) v);
            case INT64 -> s.setAtIndex(ValueLayout.JAVA_LONG, index, (long) v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, index, (byte) (v != 0 ? 1 : 0));
        }
    }

    /** Writes a long into element {@code index}, converting to the dtype. */
    public static void setLong(MemorySegment s, DType t, long index, long v) {
        switch (t) {
            case INT32 -> s.setAtIndex(ValueLayout.JAVA_INT, index, (int) v);
            case INT64 -> s.setAtIndex(ValueLayout.JAVA_LONG, index, v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, index, (byte) (v != 0 ? 1 : 0));
            case FLOAT32 -> s.setAtIndex(ValueLayout.JAVA_FLOAT, index, (float) v);
            default -> setDouble(s, t, index, v);
        }
    }

    /** Rounds a float to bfloat16 (round to nearest even, NaN kept quiet). */
    public static short toBFloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    /** Reads element {@code i} of a float32 ({@code isFloat}) or float64 buffer, for kernels that serve both. */
    public static double load(MemorySegment s, long i, boolean isFloat) {
        return isFloat ? s.getAtIndex(ValueLayout.JAVA_FLOAT, i) : s.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
    }

    /** Writes element {@code i} of a float32 ({@code isFloat}) or float64 buffer. */
    public static void store(MemorySegment s, long i, double v, boolean isFloat) {
        if (isFloat) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
        } else {
            s.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
        }
    }
}
