package io.tensorbus.distributed.rpc.impl;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.parsetools.RecordParser;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Cuts a connection's bytes into frames: a fixed 20-byte header, then a body of the length it announces.
 * A bad header is reported once to {@code onError} and nothing more is parsed.
 */
public final class RpcFrameParser implements Handler<Buffer> {
    /** A whole frame. */
    public interface FrameHandler {
        /** Called on the connection's event loop for each frame. */
        void frame(RpcFrame.Header header, Buffer body);
    }

    private final RecordParser parser;
    private final IntSupplier maxBody;
    private final FrameHandler frames;
    private final Consumer<String> onError;
    private RpcFrame.Header pending;
    private boolean failed;

    /**
     * @param maxBody the largest body accepted at the time a header is read (smaller before the handshake)
     * @param frames receives each frame
     * @param onError receives the reason of the first malformed header
     */
    public RpcFrameParser(IntSupplier maxBody, FrameHandler frames, Consumer<String> onError) {
        this.maxBody = maxBody;
        this.frames = frames;
        this.onError = onError;
        this.parser = RecordParser.newFixed(RpcFrame.HEADER, this::record);
    }

    @Override
    public void handle(Buffer data) {
        if (!failed) {
            parser.handle(data);
        }
    }

    private void record(Buffer record) {
        if (failed) {
            return;
        }
        if (pending == null) {
            try {
                pending = RpcFrame.parse(record, maxBody.getAsInt());
            } catch (IllegalArgumentException e) {
                failed = true;
                onError.accept(e.getMessage());
                return;
            }
            if (pending.bodyLength() > 0) {
                parser.fixedSizeMode(pending.bodyLength());
                return;
            }
            record = Buffer.buffer();
        }
        RpcFrame.Header h = pending;
        pending = null;
        parser.fixedSizeMode(RpcFrame.HEADER);
        frames.frame(h, record);
    }
}
