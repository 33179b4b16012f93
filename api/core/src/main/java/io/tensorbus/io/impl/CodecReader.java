package io.tensorbus.io.impl;

import io.tensorbus.io.CodecException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A bounded little-endian reader over the bytes {@link io.tensorbus.io.ObjectCodec} decodes. Every read
 * checks the bytes left first, so a claimed length is validated before anything of that size is
 * allocated; every failure is a {@link CodecException} naming the offset and what was read.
 */
public final class CodecReader {
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final byte[] buf;
    private int pos;

    /** A reader over all of {@code bytes} (not copied; not changed). */
    public CodecReader(byte[] bytes) {
        this.buf = bytes;
    }

    /** The offset of the next byte. */
    public int position() {
        return pos;
    }

    /** Bytes not read yet. */
    public int remaining() {
        return buf.length - pos;
    }

    /** Reads one unsigned byte. */
    public int u8(String what) {
        need(1, what);
        return buf[pos++] & 0xff;
    }

    /** Reads a little-endian 2-byte value. */
    public short i16(String what) {
        need(2, what);
        short v = (short) SHORT.get(buf, pos);
        pos += 2;
        return v;
    }

    /** Reads a little-endian 4-byte value. */
    public int i32(String what) {
        need(4, what);
        int v = (int) INT.get(buf, pos);
        pos += 4;
        return v;
    }

    /** Reads a little-endian 8-byte value. */
    public long i64(String what) {
        need(8, what);
        long v = (long) LONG.get(buf, pos);
        pos += 8;
        return v;
    }

    /**
     * Reads a 4-byte count of items that take at least {@code minItemBytes} each and checks that they can
     * fit in the bytes left, so that nothing is allocated for a count the input cannot back.
     *
     * @throws CodecException when the count is negative or needs more bytes than are left
     */
    public int count(String what, int minItemBytes) {
        int at = pos;
        int n = i32(what + " length");
        if (n < 0) {
            throw new CodecException(at, what + " length " + n + " is negative; lengths are 0 to "
                    + Integer.MAX_VALUE);
        }
        long bytes = (long) n * minItemBytes;
        if (bytes > remaining()) {
            throw new CodecException(at, what + " length " + n + " needs at least " + bytes
                    + " more bytes but only " + remaining() + " are left");
        }
        return n;
    }

    /** Reads {@code n} bytes (checked against the bytes left) into a new array. */
    public byte[] bytes(int n, String what) {
        need(n, what);
        byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
        pos += n;
        return b;
    }

    /**
     * Reads {@code n} bytes of strict UTF-8.
     *
     * @throws CodecException for malformed UTF-8 (overlong forms, lone surrogates, bad continuation bytes)
     */
    public String utf8(int n, String what) {
        int at = pos;
        need(n, what);
        try {
            String s = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(buf, pos, n)).toString();
            pos += n;
            return s;
        } catch (CharacterCodingException e) {
            throw new CodecException(at, what + " is not valid UTF-8 (" + e + ")");
        }
    }

    /**
     * Reads {@code count} little-endian elements into a primitive array.
     *
     * @param layout the array's element layout in native order
     */
    public void array(Object array, ValueLayout layout, int count, String what) {
        long n = (long) count * layout.byteSize();
        need(n, what);
        MemorySegment.copy(MemorySegment.ofArray(buf), CodecWriter.unalignedLittleEndian(layout), pos, array, 0, count);
        pos += (int) n;
    }

    /** Reads {@code dst.byteSize()} bytes of little-endian {@code elementSize}-byte elements into {@code dst}. */
    public void segment(MemorySegment dst, int elementSize, String what) {
        long n = dst.byteSize();
        need(n, what);
        ValueLayout native_ = CodecWriter.elementLayout(elementSize);
        MemorySegment.copy(MemorySegment.ofArray(buf), native_.withOrder(ByteOrder.LITTLE_ENDIAN), pos, dst, native_,
                0, n / elementSize);
        pos += (int) n;
    }

    /** A failure at {@code offset} of this input. */
    public CodecException fail(long offset, String problem) {
        return new CodecException(offset, problem);
    }

    private void need(long n, String what) {
        if (n > remaining()) {
            throw new CodecException(pos, "truncated: " + what + " needs " + n + " bytes but only " + remaining()
                    + " are left");
        }
    }
}
