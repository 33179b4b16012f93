package io.tensorbus.spi.support;

import io.tensorbus.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One element's bytes, encoded on the host as the host's stores convert a double: what a device runtime writes
 * when it fills a buffer with one value.
 */
public final class ElementBytes {
    private ElementBytes() {
    }

    /** {@code value} as one element of {@code dtype}, in the device's (the host's) byte order. */
    public static byte[] encode(DType dtype, double value) {
        byte[] bytes = new byte[dtype.byteSize()];
        MemorySegment s = MemorySegment.ofArray(bytes);
        switch (dtype) {
            case FLOAT32 -> s.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 0, (float) value);
            case FLOAT64 -> s.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0, value);
            case FLOAT16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, 0, Float.floatToFloat16((float) value));
            case BFLOAT16 -> s.set(ValueLayout.JAVA_SHORT_UNALIGNED, 0, bfloat16((float) value));
            case INT32 -> s.set(ValueLayout.JAVA_INT_UNALIGNED, 0, (int) (long) value);
            case INT64 -> s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, (long) value);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, 0, (byte) (value != 0 ? 1 : 0));
        }
        return bytes;
    }

    /** Round to nearest even; a NaN keeps its payload, made quiet. */
    private static short bfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }
}
