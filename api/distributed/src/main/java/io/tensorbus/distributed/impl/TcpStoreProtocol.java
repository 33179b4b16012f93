package io.tensorbus.distributed.impl;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The constants and encoders of the {@code TcpStore} wire protocol, which the client and the server speak.
 *
 * <h2>Wire protocol (version 1)</h2>
 * All integers are little-endian. A frame is {@code u32 length} (bytes after the length) and a body of at most
 * 64 MiB. Fields: a key is {@code u32 n} + n bytes of UTF-8; a value is {@code u32 n} + n bytes; a key list is
 * {@code u32 count} + keys; a long is {@code i64}; a timeout is an {@code i64} of milliseconds (positive).
 * <ul>
 *   <li>Request body: {@code u8 command, u64 requestId}, then the command's fields.</li>
 *   <li>Reply body: {@code u64 requestId, u8 status}, then for status 0 (ok) the command's result, for status 1
 *       (error: the request was valid but could not be done) a UTF-8 message.</li>
 * </ul>
 * <table>
 *   <caption>Commands</caption>
 *   <tr><th>code</th><th>command</th><th>request fields</th><th>ok reply</th></tr>
 *   <tr><td>1</td><td>PING</td><td>u32 magic {@code "TBST"} (0x54534254), u32 version</td><td>the same</td></tr>
 *   <tr><td>2</td><td>SET</td><td>key, value</td><td>nothing</td></tr>
 *   <tr><td>3</td><td>GET</td><td>key, timeout</td><td>value</td></tr>
 *   <tr><td>4</td><td>ADD</td><td>key, i64 delta</td><td>i64 sum</td></tr>
 *   <tr><td>5</td><td>COMPARE_SET</td><td>key, expected value, desired value</td><td>value</td></tr>
 *   <tr><td>6</td><td>WAIT</td><td>key list, timeout</td><td>nothing</td></tr>
 *   <tr><td>7</td><td>DELETE</td><td>key</td><td>u8 existed</td></tr>
 *   <tr><td>8</td><td>NUM_KEYS</td><td>nothing</td><td>i64 count</td></tr>
 *   <tr><td>9</td><td>CHECK</td><td>key list</td><td>u8 all set</td></tr>
 *   <tr><td>10</td><td>APPEND</td><td>key, value</td><td>nothing</td></tr>
 *   <tr><td>11</td><td>MULTI_GET</td><td>key list, timeout</td><td>u32 count, values</td></tr>
 *   <tr><td>12</td><td>MULTI_SET</td><td>u32 count, (key, value) pairs</td><td>nothing</td></tr>
 * </table>
 * A client sends PING first and uses the connection once the reply matches. The server answers a waiting
 * command when its keys are set and drops it at its timeout (without answering: the client has failed it) or
 * when the connection closes. Every length is checked against the bytes left in the frame; a frame that breaks
 * the format (bad length, unknown command, trailing bytes, bad UTF-8) makes the server close that connection,
 * logging why, while the other connections go on. No Java serialization is involved.
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
