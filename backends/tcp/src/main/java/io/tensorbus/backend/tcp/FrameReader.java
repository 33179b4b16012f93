package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tensorbus.spi.support.shm.SharedMemoryLink;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Cuts the byte stream of one connection into frames: gathers the 72 header bytes, asks the listener where
 * the payload goes, and streams the payload there as it arrives, without an intermediate copy.
 */
final class FrameReader implements SharedMemoryLink.Reader {

    /** What the reader reports: a header (answered with the payload's sink) and a finished payload. */
    interface Listener {
        /**
         * A header arrived; returns where its payload goes (ignored when the frame has none), or null to park
         * the payload: the reader then holds every later byte until {@link #resume} names the sink.
         */
        Sink onHeader(Frame frame);

        /** The whole payload of {@code frame} went into its sink. */
        void onFrame(Frame frame, Sink sink);
    }

    private Listener listener;
    private final ByteBuf header = Unpooled.buffer(Frame.HEADER_BYTES, Frame.HEADER_BYTES);
    private Frame frame;
    private Sink sink;
    private long remaining;
    private boolean parked;
    private final ArrayDeque<ByteBuf> backlog = new ArrayDeque<>();

    FrameReader(Listener listener) {
        this.listener = listener;
    }

    /** Hands the frames after this point to {@code next} (the handshake hands over to the connection). */
    void listener(Listener next) {
        this.listener = next;
    }

    /**
     * Consumes every readable byte of {@code in} (the caller releases it). While a payload is parked, the
     * bytes are held, in order, until {@link #resume}.
     *
     * @throws Frame.MalformedFrameException when a header breaks the protocol
     */
    void feed(ByteBuf in) {
        if (!parked) {
            consume(in);
        }
        if (in.isReadable()) {
            // Parked before or inside this buffer: keep the rest, after everything held already.
            backlog.addLast(in.retain());
        }
    }

    /**
     * Reads frames from {@code in}, memory its owner keeps (a shared-memory ring), until it is used up or a
     * payload parks; returns how many bytes were consumed. Unlike {@link #feed} nothing is held: the bytes from
     * the parked payload on stay with the owner, who offers them again after {@link #resume}.
     *
     * @throws Frame.MalformedFrameException when a header breaks the protocol
     */
    @Override
    public long consume(MemorySegment in) {
        if (parked || in.byteSize() == 0) {
            return 0;
        }
        ByteBuf b = Unpooled.wrappedBuffer(in.asByteBuffer());
        consume(b);
        return b.readerIndex();
    }

    /** Reads frames from {@code in} until it is empty or a payload parks. */
    private void consume(ByteBuf in) {
        while (in.isReadable() && !parked) {
            if (frame == null) {
                readHeader(in);
            } else {
                readPayload(in);
            }
        }
    }

    private void readHeader(ByteBuf in) {
        int take = Math.min(in.readableBytes(), header.writableBytes());
        in.readBytes(header, take);
        if (header.isWritable()) {
            return;
        }
        Frame f = Frame.decode(header);
        header.clear();
        if (f.payloadBytes() == 0) {
            Sink s = listener.onHeader(f);
            if (s != null) {
                s.whenFull.run();
            }
            listener.onFrame(f, s);
            return;
        }
        frame = f;
        remaining = f.payloadBytes();
        sink = listener.onHeader(f);
        parked = sink == null;
    }

    /** True when no frame is half read or parked: the next byte starts a frame. */
    @Override
    public boolean betweenFrames() {
        return !parked && frame == null && header.writerIndex() == 0;
    }

    /** True while a payload waits for its sink. */
    @Override
    public boolean isParked() {
        return parked;
    }

    /**
     * Names the sink of the parked payload and processes the bytes held meanwhile, oldest first, until they
     * run out or another payload parks (whose bytes then stay first in line).
     *
     * @throws Frame.MalformedFrameException when a held header breaks the protocol
     */
    void resume(Sink target) {
        if (!parked) {
            throw new IllegalStateException("no parked payload");
        }
        sink = target;
        parked = false;
        while (!parked && !backlog.isEmpty()) {
            ByteBuf b = backlog.peekFirst();
            consume(b);
            if (!b.isReadable()) {
                backlog.pollFirst();
                b.release();
            }
        }
    }

    /** Releases the bytes held while parked (the connection closed). */
    void discard() {
        backlog.forEach(ByteBuf::release);
        backlog.clear();
    }

    private void readPayload(ByteBuf in) {
        int take = (int) Math.min(in.readableBytes(), remaining);
        write(in, take);
        in.skipBytes(take);
        remaining -= take;
        if (remaining == 0) {
            Frame done = frame;
            Sink s = sink;
            frame = null;
            sink = null;
            s.whenFull.run();
            listener.onFrame(done, s);
        }
    }

    private void write(ByteBuf in, int length) {
        int index = in.readerIndex();
        if (in.hasArray()) {
            sink.accept(MemorySegment.ofArray(in.array()).asSlice(in.arrayOffset() + index, length));
            return;
        }
        for (ByteBuffer b : in.nioBuffers(index, length)) {
            sink.accept(MemorySegment.ofBuffer(b));
        }
    }
}
