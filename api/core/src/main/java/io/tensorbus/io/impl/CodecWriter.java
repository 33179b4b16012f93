package io.tensorbus.io.impl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A growable little-endian byte buffer that {@link io.tensorbus.io.ObjectCodec} encodes into. Not thread
 * safe: one encoding at a time.
 */
public final class CodecWriter {
    /** The largest array the JVM reliably allocates. */
    static final int MAX_SIZE = Integer.MAX_VALUE - 16;

    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] buf = new byte[64];
    private int size;

    /** Appends one byte (the low 8 bits of {@code v}). */
    public void u8(int v) {
        ensure(1);
        buf[size++] = (byte) v;
    }

    /** Appends 2 bytes, little-endian. */
    public void i16(int v) {
        ensure(2);
        SHORT.set(buf, size, (short) v);
        size += 2;
    }

    /** Appends 4 bytes, little-endian. */
    public void i32(int v) {
        ensure(4);
        INT.set(buf, size, v);
        size += 4;
    }

    /** Appends 8 bytes, little-endian. */
    public void i64(long v) {
        ensure(8);
        LONG.set(buf, size, v);
        size += 8;
    }

    /** Appends the bytes of an array. */
    public void bytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    /**
     * Appends {@code count} elements of a primitive array ({@code int[]}, {@code long[]}, {@code float[]},
     * {@code double[]}) little-endian.
     *
     * @param layout the element layout of the array, in native order
     */
    public void array(Object array, ValueLayout layout, int count) {
        long n = (long) count * layout.byteSize();
        ensure(n);
        MemorySegment.copy(array, 0, MemorySegment.ofArray(buf), unalignedLittleEndian(layout), size, count);
        size += (int) n;
    }

    /**
     * Appends the elements of a segment holding {@code elementSize}-byte elements in native order,
     * little-endian.
     */
    public void segment(MemorySegment src, int elementSize) {
        long n = src.byteSize();
        ensure(n);
        ValueLayout native_ = elementLayout(elementSize);
        MemorySegment.copy(src, native_, 0, MemorySegment.ofArray(buf), native_.withOrder(ByteOrder.LITTLE_ENDIAN),
                size, n / elementSize);
        size += (int) n;
    }

    /** The bytes written so far, trimmed. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }

    private void ensure(long extra) {
        long need = size + extra;
        if (need > MAX_SIZE) {
            throw new IllegalArgumentException("the encoding would take " + need + " bytes, more than the "
                    + MAX_SIZE + " a byte array holds; send large tensors with the tensor collectives instead");
        }
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, (int) Math.min(MAX_SIZE, Math.max(need, 2L * buf.length)));
        }
    }

    /** An unaligned native-order layout of 1, 2, 4 or 8 bytes (unaligned: heap arrays give no alignment). */
    static ValueLayout elementLayout(int size) {
        return switch (size) {
            case 1 -> ValueLayout.JAVA_BYTE;
            case 2 -> ValueLayout.JAVA_SHORT_UNALIGNED;
            case 4 -> ValueLayout.JAVA_INT_UNALIGNED;
            case 8 -> ValueLayout.JAVA_LONG_UNALIGNED;
            default -> throw new IllegalArgumentException("no element layout of " + size + " bytes");
        };
    }

    /** The layout with alignment 1 and little-endian order. */
    static ValueLayout unalignedLittleEndian(ValueLayout layout) {
        return layout.withByteAlignment(1).withOrder(ByteOrder.LITTLE_ENDIAN);
    }
}
