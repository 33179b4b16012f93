package io.tensorbus.distributed.impl;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The wire of PyTorch 1.13's {@code TCPStore} ({@code torch/csrc/distributed/c10d/TCPStore.cpp}): a request is one
 * command byte, then its arguments, strings and byte vectors each as a little-endian u64 length and the bytes,
 * integers as little-endian i64; a connection carries one request at a time (the client is synchronous), and a SET
 * has no answer. The byte values below were read from a transcript of Debian's {@code python3-torch} 1.13 client
 * talking to its server. PyTorch's client puts {@value #KEY_PREFIX} before every key, so a key here is the key as
 * Python code names it.
 */
public final class PyTorchStoreWire {
    /** The prefix PyTorch's TCPStore client adds to every key ({@code regularPrefix_}). */
    public static final String KEY_PREFIX = "/";
    /** Sets a key: key, value; no answer. */
    public static final byte SET = 0;
    /** key, expected, desired; answers the value held afterwards. */
    public static final byte COMPARE_SET = 1;
    /** key; answers its value (the client waits for it first). */
    public static final byte GET = 2;
    /** key, delta; answers the sum. */
    public static final byte ADD = 3;
    /** count, keys; answers READY or NOT_READY. */
    public static final byte CHECK = 4;
    /** count, keys; answers STOP_WAITING once all are set. */
    public static final byte WAIT = 5;
    /** answers the number of keys. */
    public static final byte GET_NUM_KEYS = 6;
    /** key; answers how many keys were deleted. */
    public static final byte DELETE_KEY = 8;
    /** CHECK's answer when every key is set. */
    public static final byte READY = 0;
    /** CHECK's answer when some key is missing. */
    public static final byte NOT_READY = 1;
    /** WAIT's answer once every key is set. */
    public static final byte STOP_WAITING = 0;
    /** The longest value or key accepted from the peer: PyTorch's stores hold small values (addresses, counters). */
    public static final long MAX_BYTES = 64L << 20;

    private PyTorchStoreWire() {
    }

    /** A request: {@code command}, then each argument in order ({@code String} key, {@code byte[]} value, long). */
    public static Buffer request(byte command, Object... args) {
        Buffer b = Buffer.buffer().appendByte(command);
        for (Object a : args) {
            if (a instanceof String key) {
                bytes(b, (KEY_PREFIX + key).getBytes(StandardCharsets.UTF_8));
            } else if (a instanceof byte[] value) {
                bytes(b, value);
            } else if (a instanceof Long v) {
                b.appendLongLE(v);
            } else {
                throw new IllegalArgumentException("a TCPStore argument is a key, a value or a long, got " + a);
            }
        }
        return b;
    }

    /** A request with a count of keys and the keys (CHECK, WAIT). */
    public static Buffer keysRequest(byte command, List<String> keys) {
        Buffer b = Buffer.buffer().appendByte(command).appendLongLE(keys.size());
        for (String k : keys) {
            bytes(b, (KEY_PREFIX + k).getBytes(StandardCharsets.UTF_8));
        }
        return b;
    }

    private static void bytes(Buffer b, byte[] v) {
        b.appendLongLE(v.length).appendBytes(v);
    }

    /** The shapes of answers: read one from {@code in} at {@code at}, or answer null when it is not all there. */
    public enum Answer {
        /** No answer (SET). */
        NONE,
        /** One byte (CHECK, WAIT). */
        BYTE,
        /** A little-endian i64 (ADD, GET_NUM_KEYS, DELETE_KEY). */
        LONG,
        /** A u64 length and the bytes (GET, COMPARE_SET). */
        VECTOR;

        /** How many bytes of {@code in} from {@code at} the answer takes, or -1 when not all of it has come. */
        public long length(Buffer in, int at) {
            int left = in.length() - at;
            return switch (this) {
                case NONE -> 0;
                case BYTE -> left >= 1 ? 1 : -1;
                case LONG -> left >= 8 ? 8 : -1;
                case VECTOR -> {
                    if (left < 8) {
                        yield -1;
                    }
                    long n = in.getLongLE(at);
                    if (n < 0 || n > MAX_BYTES) {
                        throw new IllegalStateException("a TCPStore answer of " + Long.toUnsignedString(n)
                                + " bytes (at most " + MAX_BYTES + " are accepted)");
                    }
                    yield left >= 8 + n ? 8 + n : -1;
                }
            };
        }
    }
}
