package io.tensorbus.distributed.rpc.impl;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Cuts a connection's bytes into frames: a fixed 20-byte header, then a body of the length it announces,
 * copied once from Netty's receive buffers into an array of exactly that length, then any attachments,
 * copied once from those buffers into the tensors' memory (a general record parser grows a buffer and
 * copies it again, and Vert.x's {@code NetSocket.handler} copies every read to the heap first: see
 * {@link #readFrom}). A bad header is reported once to {@code onError} and nothing more is parsed.
 */
public final class RpcFrameParser implements Handler<Buffer> {
    /** A whole frame. */
    public interface FrameHandler {
        /**
         * For a frame with attachments, once its body is in: where the attachment bytes go, in order
         * (typically the memory of tensors the body describes).
         *
         * @throws IllegalArgumentException when the body is malformed or announces too much
         */
        default List<MemorySegment> attachments(RpcFrame.Header header, byte[] body) {
            throw new IllegalArgumentException("a frame of kind " + header.kind() + " may not carry attachments");
        }

        /** Called on the connection's event loop for each frame; the body array belongs to the handler. */
        void frame(RpcFrame.Header header, byte[] body);
    }

    private final IntSupplier maxBody;
    private final FrameHandler frames;
    private final Consumer<String> onError;
    private final byte[] header = new byte[RpcFrame.HEADER];
    private int headerFilled;
    private RpcFrame.Header pending;
    private byte[] body;
    private int bodyFilled;
    private List<MemorySegment> targets;
    private int target;
    private long targetFilled;
    private volatile boolean failed;

    /**
     * @param maxBody the largest body accepted at the time a header is read (smaller before the handshake)
     * @param frames receives each frame
     * @param onError receives the reason of the first malformed header
     */
    public RpcFrameParser(IntSupplier maxBody, FrameHandler frames, Consumer<String> onError) {
        this.maxBody = maxBody;
        this.frames = frames;
        this.onError = onError;
    }

    /** Parses nothing more (the connection is being refused: frames behind the bad one must not run). */
    public void stop() {
        failed = true;
    }

    /**
     * Makes this parser read {@code socket}'s bytes as Netty delivers them (direct, pooled buffers, released
     * here once parsed), instead of through {@link NetSocket#handler}, which first copies every read into a
     * new heap buffer. Pausing the socket still holds the reads back.
     */
    public void readFrom(NetSocket socket) {
        ((NetSocketInternal) socket).messageHandler(msg -> {
            try {
                if (msg instanceof ByteBuf b) {
                    read(b);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        });
    }

    @Override
    public void handle(Buffer data) {
        read(((BufferInternal) data).getByteBuf());
    }

    /** Parses {@code bytes} (a shared-memory ring's, read in place: nothing of them is kept). */
    public void read(MemorySegment bytes) {
        read(Unpooled.wrappedBuffer(bytes.asByteBuffer()));
    }

    /** Parses the readable bytes of {@code data}; neither moves its indices nor releases it. */
    public void read(ByteBuf data) {
        int at = data.readerIndex();
        int length = data.writerIndex();
        while (at < length && !failed) {
            at = pending == null ? readHeader(data, at, length)
                    : targets == null ? readBody(data, at, length) : readAttachment(data, at, length);
        }
    }

    private int readHeader(ByteBuf data, int at, int length) {
        int n = Math.min(RpcFrame.HEADER - headerFilled, length - at);
        data.getBytes(at, header, headerFilled, n);
        headerFilled += n;
        if (headerFilled == RpcFrame.HEADER) {
            headerFilled = 0;
            try {
                pending = RpcFrame.parse(Buffer.buffer(header), maxBody.getAsInt());
            } catch (IllegalArgumentException e) {
                failed = true;
                onError.accept(e.getMessage());
                return length;
            }
            body = new byte[pending.bodyLength()];
            bodyFilled = 0;
            if (body.length == 0) {
                bodyDone();
            }
        }
        return at + n;
    }

    private int readBody(ByteBuf data, int at, int length) {
        int n = Math.min(body.length - bodyFilled, length - at);
        data.getBytes(at, body, bodyFilled, n);
        bodyFilled += n;
        if (bodyFilled == body.length) {
            bodyDone();
        }
        return at + n;
    }

    private void bodyDone() {
        if (!pending.hasAttachments()) {
            deliver();
            return;
        }
        try {
            targets = frames.attachments(pending, body);
        } catch (RuntimeException | OutOfMemoryError e) {
            failed = true;
            onError.accept(e instanceof OutOfMemoryError ? "its attachments do not fit in memory" : e.getMessage());
            return;
        }
        target = 0;
        targetFilled = 0;
        skipFilledTargets();
    }

    /** Copies straight from the socket's buffer into the attachment's memory: one copy per byte. */
    private int readAttachment(ByteBuf data, int at, int length) {
        MemorySegment t = targets.get(target);
        int n = (int) Math.min(t.byteSize() - targetFilled, length - at);
        if (data.nioBufferCount() == 1) {
            MemorySegment.copy(MemorySegment.ofBuffer(data.nioBuffer(at, n)), 0, t, targetFilled, n);
        } else {
            data.getBytes(at, t.asSlice(targetFilled, n).asByteBuffer());
        }
        targetFilled += n;
        skipFilledTargets();
        return at + n;
    }

    private void skipFilledTargets() {
        while (target < targets.size() && targetFilled == targets.get(target).byteSize()) {
            target++;
            targetFilled = 0;
        }
        if (target == targets.size()) {
            targets = null;
            deliver();
        }
    }

    private void deliver() {
        RpcFrame.Header h = pending;
        byte[] b = body;
        pending = null;
        body = null;
        frames.frame(h, b);
    }
}
