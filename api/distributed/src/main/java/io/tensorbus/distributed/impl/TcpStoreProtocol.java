package io.tensorbus.distributed.impl;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The constants and encoders of the {@code TcpStore} wire protocol; the format is documented on
 * {@code io.tensorbus.distributed.TcpStore}. Every frame is {@code u32 length} (of what follows) and a body;
 * integers are little-endian, strings UTF-8 with a {@code u32} byte count, byte arrays a {@code u32} count.
 */
final class TcpStoreProtocol {

    /** {@code "TBST"} read as a little-endian u32; sent in the PING handshake. */
    static final int MAGIC = 0x54534254;
    static final int VERSION = 1;
    /** The largest frame body either side accepts or sends. */
    static final int MAX_FRAME = 64 << 20;
    /** u8 command + u64 request id. */
    static final int REQUEST_HEADER = 9;
    /** u64 request id + u8 status. */
    static final int REPLY_HEADER = 9;

    static final byte STATUS_OK = 0;
    static final byte STATUS_ERROR = 1;

    static final byte PING = 1;
    static final byte SET = 2;
    static final byte GET = 3;
    static final byte ADD = 4;
    static final byte COMPARE_SET = 5;
    static final byte WAIT = 6;
    static final byte DELETE = 7;
    static final byte NUM_KEYS = 8;
    static final byte CHECK = 9;
    static final byte APPEND = 10;
    static final byte MULTI_GET = 11;
    static final byte MULTI_SET = 12;

    private TcpStoreProtocol() {
    }

    /** A request frame with its length left to {@link #finish}: u32 length, u8 command, u64 id. */
    static Buffer request(byte command, long id) {
        return Buffer.buffer(64).appendIntLE(0).appendByte(command).appendLongLE(id);
    }

    /** A reply frame with its length left to {@link #finish}: u32 length, u64 id, u8 status. */
    static Buffer reply(long id, byte status) {
        return Buffer.buffer(32).appendIntLE(0).appendLongLE(id).appendByte(status);
    }

    /**
     * Writes the frame's length.
     *
     * @throws IllegalArgumentException when the body is larger than {@link #MAX_FRAME}
     */
    static Buffer finish(Buffer frame) {
        int body = frame.length() - 4;
        if (body > MAX_FRAME) {
            throw new IllegalArgumentException("a TcpStore frame of " + body + " bytes exceeds the limit of "
                    + MAX_FRAME + " bytes (64 MiB): store smaller values");
        }
        return frame.setIntLE(0, body);
    }

    static Buffer appendKey(Buffer frame, String key) {
        return appendValue(frame, key.getBytes(StandardCharsets.UTF_8));
    }

    static Buffer appendValue(Buffer frame, byte[] value) {
        checkRoom(frame, value.length);
        return frame.appendIntLE(value.length).appendBytes(value);
    }

    static Buffer appendKeys(Buffer frame, List<String> keys) {
        frame.appendIntLE(keys.size());
        for (String key : keys) {
            appendKey(frame, key);
        }
        return frame;
    }

    /** A readable name of a command, for log messages. */
    static String commandName(int command) {
        return switch (command) {
            case PING -> "PING";
            case SET -> "SET";
            case GET -> "GET";
            case ADD -> "ADD";
            case COMPARE_SET -> "COMPARE_SET";
            case WAIT -> "WAIT";
            case DELETE -> "DELETE";
            case NUM_KEYS -> "NUM_KEYS";
            case CHECK -> "CHECK";
            case APPEND -> "APPEND";
            case MULTI_GET -> "MULTI_GET";
            case MULTI_SET -> "MULTI_SET";
            default -> "command " + command;
        };
    }

    /** Fails early, before copying a large value, when the frame could not be sent anyway. */
    private static void checkRoom(Buffer frame, int more) {
        if ((long) frame.length() - 4 + 4 + more > MAX_FRAME) {
            throw new IllegalArgumentException("a TcpStore frame would exceed the limit of " + MAX_FRAME
                    + " bytes (64 MiB) with a field of " + more + " bytes: store smaller values");
        }
    }
}
