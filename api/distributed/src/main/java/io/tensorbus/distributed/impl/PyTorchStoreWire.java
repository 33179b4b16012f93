package io.tensorbus.distributed.impl;

import io.tensorbus.distributed.PyTorchWire;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The wires of PyTorch's {@code TCPStore} ({@code torch/csrc/distributed/c10d/TCPStore.cpp}, and from 2.1
 * {@code TCPStoreBackend.hpp}): a request is one command byte, then its arguments, strings and byte vectors each as a
 * little-endian u64 length and the bytes, integers as little-endian i64; a connection carries one request at a time
 * (the client is synchronous), and SET, APPEND and MULTI_SET have no answer. The two wires ({@link PyTorchWire}) differ
 * in the numbers of the commands and in a handshake: from 2.2 a client's first request on every connection is
 * {@link Command#VALIDATE} with {@link #VALIDATION_MAGIC} as a u32, which has no answer. The 1.13 bytes were read
 * from a transcript of Debian's {@code python3-torch} 1.13 client talking to its server; the 2.2 ones from the
 * sources.
 * PyTorch's client puts {@value #KEY_PREFIX} before every key, so a key here is the key as Python code names it.
 */
public final class PyTorchStoreWire {
    /** The prefix PyTorch's TCPStore client adds to every key ({@code regularPrefix_}). */
    public static final String KEY_PREFIX = "/";
    /** The u32 a 2.2+ client sends after {@link Command#VALIDATE} ({@code validationMagicNumber}). */
    public static final int VALIDATION_MAGIC = 0x3C85F7CE;
    /** CHECK's answer when every key is set. */
    public static final byte READY = 0;
    /** CHECK's answer when some key is missing. */
    public static final byte NOT_READY = 1;
    /** WAIT's answer once every key is set. */
    public static final byte STOP_WAITING = 0;
    /** CANCEL_WAIT's answer ({@code WAIT_CANCELED}). */
    public static final byte WAIT_CANCELED = 1;

    /** The commands, with their numbers on each wire ({@code QueryType}); -1 where a wire lacks one. */
    public enum Command {
        /** 2.2+: the u32 {@link #VALIDATION_MAGIC}; no answer. */
        VALIDATE(-1, 0),
        /** key, value; no answer. */
        SET(0, 1),
        /** key, expected, desired; answers the value held afterwards. */
        COMPARE_SET(1, 2),
        /** key; answers its value (the client waits for it first). */
        GET(2, 3),
        /** key, delta; answers the sum. */
        ADD(3, 4),
        /** count, keys; answers READY or NOT_READY. */
        CHECK(4, 5),
        /** count, keys; answers STOP_WAITING once all are set. */
        WAIT(5, 6),
        /** answers the number of keys. */
        GET_NUM_KEYS(6, 7),
        /** 1.13's key watch (not served here). */
        WATCH_KEY(7, -1),
        /** key; answers how many keys were deleted. */
        DELETE_KEY(8, 8),
        /** key, bytes added at the value's end; no answer. */
        APPEND(9, 9),
        /** count, keys; answers one value per key. */
        MULTI_GET(10, 10),
        /** count, then key and value pairs; no answer. */
        MULTI_SET(11, 11),
        /** ends this connection's WAIT; answers WAIT_CANCELED (after a STOP_WAITING when the wait ended first). */
        CANCEL_WAIT(12, 12),
        /** Later 2.x (the client pings right after validating): a u32 nonce, answered with the same u32. */
        PING(-1, 13);

        private final int legacy;
        private final int validated;

        Command(int legacy, int validated) {
            this.legacy = legacy;
            this.validated = validated;
        }

        /** This command's byte on {@code wire}, or -1 when that wire has none. */
        public int code(PyTorchWire wire) {
            return wire == PyTorchWire.V1_13 ? legacy : validated;
        }

        /** The command {@code code} is on {@code wire}, or null. */
        public static Command of(PyTorchWire wire, int code) {
            for (Command c : values()) {
                if (c.code(wire) == code) {
                    return c;
                }
            }
            return null;
        }
    }

    /** The longest value or key accepted from the peer: PyTorch's stores hold small values (addresses, counters). */
    public static final long MAX_BYTES = 64L << 20;

    private PyTorchStoreWire() {
    }

    /**
     * A request on {@code wire}: the command's byte, then each argument in order ({@code String} key, {@code byte[]}
     * value, long).
     *
     * @throws IllegalArgumentException when {@code wire} has no such command
     */
    public static Buffer request(PyTorchWire wire, Command command, Object... args) {
        Buffer b = Buffer.buffer().appendByte(code(wire, command));
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

    /** A request with a count of keys and the keys (CHECK, WAIT, MULTI_GET). */
    public static Buffer keysRequest(PyTorchWire wire, Command command, List<String> keys) {
        Buffer b = Buffer.buffer().appendByte(code(wire, command)).appendLongLE(keys.size());
        for (String k : keys) {
            bytes(b, (KEY_PREFIX + k).getBytes(StandardCharsets.UTF_8));
        }
        return b;
    }

    /** What a 2.2+ client sends first on every connection: VALIDATE and the magic. */
    public static Buffer validation() {
        return Buffer.buffer().appendByte((byte) Command.VALIDATE.validated).appendIntLE(VALIDATION_MAGIC);
    }

    private static byte code(PyTorchWire wire, Command command) {
        int code = command.code(wire);
        if (code < 0) {
            throw new IllegalArgumentException("PyTorch's " + wire + " TCPStore wire has no " + command);
        }
        return (byte) code;
    }

    private static void bytes(Buffer b, byte[] v) {
        b.appendLongLE(v.length).appendBytes(v);
    }

    /** The shapes of answers: read one from {@code in} at {@code at}, or answer null when it is not all there. */
    public enum Answer {
        /** No answer (SET). */
        NONE,
        /** One byte (CHECK, WAIT, CANCEL_WAIT). */
        BYTE,
        /** A little-endian u32 (PING). */
        INT,
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
                case INT -> left >= 4 ? 4 : -1;
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
