package io.tensorbus.distributed.impl;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.parsetools.RecordParser;

/**
 * Cuts a {@code TcpStore} byte stream into frames: a u32 little-endian length, then that many bytes. A length
 * outside {@code [minBody, MAX_FRAME]} is reported once to {@code malformed} and everything after it is ignored,
 * since the stream has lost its framing. Runs on the connection's event loop; not thread-safe.
 */
final class TcpStoreFrameParser implements Handler<Buffer> {

    private final RecordParser parser = RecordParser.newFixed(4);
    private final int minBody;
    private final Handler<Buffer> frames;
    private final Handler<String> malformed;
    private boolean expectLength = true;
    private boolean failed;

    /**
     * @param minBody the fewest bytes a frame body has (its fixed header)
     * @param frames receives each frame body
     * @param malformed receives why the stream broke, once
     */
    TcpStoreFrameParser(int minBody, Handler<Buffer> frames, Handler<String> malformed) {
        this.minBody = minBody;
        this.frames = frames;
        this.malformed = malformed;
        parser.handler(this::record);
    }

    @Override
    public void handle(Buffer bytes) {
        if (!failed) {
            parser.handle(bytes);
        }
    }

    /** Stops parsing, e.g. because a frame's content was malformed. */
    void fail() {
        failed = true;
    }

    private void record(Buffer record) {
        if (failed) {
            return;
        }
        if (expectLength) {
            long length = record.getUnsignedIntLE(0);
            if (length < minBody || length > TcpStoreProtocol.MAX_FRAME) {
                failed = true;
                malformed.handle("frame length " + length + " is outside [" + minBody + ", "
                        + TcpStoreProtocol.MAX_FRAME + "]");
                return;
            }
            expectLength = false;
            parser.fixedSizeMode((int) length);
        } else {
            expectLength = true;
            parser.fixedSizeMode(4);
            frames.handle(record);
        }
    }
}
