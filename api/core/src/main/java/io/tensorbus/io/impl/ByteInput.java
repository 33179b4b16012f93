package io.tensorbus.io.impl;

import io.tensorbus.io.TensorFormatException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * A forward-only byte source (a file channel, a stream's channel, or a byte array) that the readers pull
 * exact byte counts from, reading tensor data straight into off-heap memory. Running out of bytes is a
 * {@link TensorFormatException} ("truncated") naming the source and what was being read.
 */
public abstract sealed class ByteInput {
    /** Largest chunk handed to one {@link ByteBuffer} (buffers are int-indexed). */
    static final long CHUNK = 1L << 30;

    private final String name;
    long position;

    ByteInput(String name) {
        this.name = name;
    }

    /**
     * A source over a channel.
     *
     * @param name names the source in error messages
     * @param size bytes left in the channel, or -1 when unknown (a plain stream)
     */
    public static ByteInput of(ReadableByteChannel channel, String name, long size) {
        return new OfChannel(channel, name, size);
    }

    /** A source over a whole byte array. */
    public static ByteInput of(byte[] bytes, String name) {
        return new OfArray(bytes, name);
    }

    /** The source name for error messages. */
    public final String name() {
        return name;
    }

    /** Bytes consumed so far. */
    public final long position() {
        return position;
    }

    /** Bytes left, or -1 when the source does not know (a plain stream). */
    public abstract long remaining();

    /**
     * Reads exactly {@code dst.byteSize()} bytes into {@code dst}.
     *
     * @param what names what is read, for the "truncated" message (e.g. "tensor data")
     * @throws TensorFormatException when the source ends first
     * @throws IOException when the source fails
     */
    public abstract void readFully(MemorySegment dst, String what) throws IOException;

    /**
     * Reads exactly {@code n} bytes into a new array.
     *
     * @throws TensorFormatException when the source ends first
     */
    public final byte[] readBytes(int n, String what) throws IOException {
        byte[] b = new byte[n];
        readFully(MemorySegment.ofArray(b), what);
        return b;
    }

    /**
     * Checks that {@code n} more bytes are available when the size is known, before memory for them is
     * allocated (so a header that claims a huge shape fails fast instead of allocating).
     *
     * @throws TensorFormatException when fewer than {@code n} bytes are left
     */
    public final void require(long n, String what) throws TensorFormatException {
        long left = remaining();
        if (left >= 0 && left < n) {
            throw truncated(what, n, left);
        }
    }

    final TensorFormatException truncated(String what, long wanted, long got) {
        return new TensorFormatException(name, "truncated: " + what + " needs " + wanted + " bytes but only "
                + got + " remain (at byte offset " + position + ")");
    }

    /** A channel, read in chunks of at most {@link #CHUNK} bytes. */
    static final class OfChannel extends ByteInput {
        private final ReadableByteChannel channel;
        private final long size;

        OfChannel(ReadableByteChannel channel, String name, long size) {
            super(name);
            this.channel = channel;
            this.size = size;
        }

        @Override
        public long remaining() {
            return size < 0 ? -1 : size - position;
        }

        @Override
        public void readFully(MemorySegment dst, String what) throws IOException {
            require(dst.byteSize(), what);
            long done = 0;
            while (done < dst.byteSize()) {
                ByteBuffer buf = dst.asSlice(done, Math.min(CHUNK, dst.byteSize() - done)).asByteBuffer();
                while (buf.hasRemaining()) {
                    if (channel.read(buf) < 0) {
                        throw truncated(what, dst.byteSize(), done + buf.position());
                    }
                }
                done += buf.capacity();
            }
            position += done;
        }
    }

    /** A byte array. */
    static final class OfArray extends ByteInput {
        private final byte[] bytes;

        OfArray(byte[] bytes, String name) {
            super(name);
            this.bytes = bytes;
        }

        @Override
        public long remaining() {
            return bytes.length - position;
        }

        @Override
        public void readFully(MemorySegment dst, String what) throws IOException {
            require(dst.byteSize(), what);
            MemorySegment.copy(MemorySegment.ofArray(bytes), position, dst, 0, dst.byteSize());
            position += dst.byteSize();
        }
    }
}
