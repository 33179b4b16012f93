package io.tensorbus.distributed.impl;

import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.distributed.impl.PyTorchStoreWire.Command;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One PyTorch client's connection to a {@code PyTorchStoreServer}: tells the client's wire ({@link PyTorchWire}) from
 * its first bytes (a 2.2+ client opens with VALIDATE, byte 0, and the magic {@code CE F7 85 3C}; on 1.13's wire a
 * byte 0 is a SET, whose key length cannot start with those bytes), then reads its requests
 * ({@link PyTorchStoreWire}) one at a time and answers each from the shared {@link StoreState}. While a WAIT waits it
 * reads nothing but a CANCEL_WAIT (PyTorch's client sends nothing else meanwhile). A request it does not serve (a key
 * watch, a GET of an absent key, a wrong magic, a length past {@link PyTorchStoreWire#MAX_BYTES}) closes the
 * connection, saying why in the log. On the socket's context.
 */
public final class PyTorchStoreConnection {
    private static final System.Logger LOG = System.getLogger(PyTorchStoreConnection.class.getName());

    private final NetSocket socket;
    private final StoreState state;
    private final Context context;
    private Buffer received = Buffer.buffer();
    private StoreWaiter waiting;
    private boolean closed;
    /** The client's wire, once its first bytes have told it. */
    private PyTorchWire wire;

    private PyTorchStoreConnection(NetSocket socket, StoreState state, Context context) {
        this.socket = socket;
        this.state = state;
        this.context = context;
    }

    /** Serves {@code socket} from {@code state} until either side closes it; on the socket's context. */
    public static void serve(NetSocket socket, StoreState state) {
        PyTorchStoreConnection c = new PyTorchStoreConnection(socket, state, Vertx.currentContext());
        socket.handler(c::arrived);
        socket.closeHandler(v -> c.closed());
    }

    private void arrived(Buffer data) {
        received.appendBuffer(data);
        serveWhatArrived();
    }

    private void closed() {
        closed = true;
        StoreWaiter w = waiting;
        waiting = null;
        if (w != null) {
            state.cancel(w);
        }
    }

    /** Serves every whole request that arrived; while a WAIT waits, only a CANCEL_WAIT. */
    private void serveWhatArrived() {
        while (!closed && (wire != null || detectWire())) {
            Reader r = new Reader(received);
            Buffer answer;
            try {
                answer = serveOne(r);
            } catch (Refused e) {
                refuse(e.getMessage());
                return;
            }
            if (!r.complete) {
                return;
            }
            received = received.getBuffer(r.at, received.length());
            if (answer != null) {
                socket.write(answer);
            }
        }
    }

    /** True once the first bytes tell the client's wire (a 2.2+ client opens with VALIDATE and the magic). */
    private boolean detectWire() {
        if (received.length() == 0 || received.getByte(0) == 0 && received.length() < 5) {
            return false;
        }
        boolean validated = received.getByte(0) == 0 && received.getIntLE(1) == PyTorchStoreWire.VALIDATION_MAGIC;
        wire = validated ? PyTorchWire.V2_2 : PyTorchWire.V1_13;
        return true;
    }

    /**
     * Serves the request at the start of {@code r}; null when it has no answer (yet), or is not all there. While a
     * WAIT waits only a CANCEL_WAIT is read: anything else stays unread until the wait ends.
     */
    private Buffer serveOne(Reader r) {
        int code = r.command();
        if (code < 0) {
            return null;
        }
        Command command = Command.of(wire, code);
        if (waiting != null && command != Command.CANCEL_WAIT) {
            r.complete = false;
            return null;
        }
        if (command == null) {
            throw new Refused("command " + code + " is not one of PyTorch's " + wire + " TCPStore wire");
        }
        return switch (command) {
            case VALIDATE -> validate(r);
            case SET -> set(r);
            case COMPARE_SET -> compareSet(r);
            case GET -> get(r);
            case ADD -> add(r);
            case CHECK -> check(r);
            case WAIT -> await(r);
            case GET_NUM_KEYS -> longAnswer(state.size());
            case DELETE_KEY -> delete(r);
            case APPEND -> append(r);
            case MULTI_GET -> multiGet(r);
            case MULTI_SET -> multiSet(r);
            case CANCEL_WAIT -> cancelWait();
            case PING -> ping(r);
            case WATCH_KEY -> throw new Refused("WATCH_KEY is not served (key watches are PyTorch's internal use)");
        };
    }

    private Buffer validate(Reader r) {
        int magic = r.intValue();
        if (r.done() && magic != PyTorchStoreWire.VALIDATION_MAGIC) {
            throw new Refused(String.format("VALIDATE with 0x%08X, not PyTorch's 0x%08X", magic,
                    PyTorchStoreWire.VALIDATION_MAGIC));
        }
        return null;
    }

    private Buffer set(Reader r) {
        String key = r.string();
        byte[] value = r.bytes();
        if (!r.done()) {
            return null;
        }
        state.set(key, value);
        return null;
    }

    private Buffer compareSet(Reader r) {
        String key = r.string();
        byte[] expected = r.bytes();
        byte[] desired = r.bytes();
        return r.done() ? vector(state.compareSet(key, expected, desired)) : null;
    }

    private Buffer get(Reader r) {
        String key = r.string();
        if (!r.done()) {
            return null;
        }
        return vector(present(key));
    }

    private byte[] present(String key) {
        byte[] value = state.get(key);
        if (value == null) {
            throw new Refused("GET of absent key '" + key + "' (PyTorch's client waits for a key before it gets it)");
        }
        return value;
    }

    private Buffer add(Reader r) {
        String key = r.string();
        long delta = r.longValue();
        if (!r.done()) {
            return null;
        }
        try {
            return longAnswer(state.add(key, delta));
        } catch (RuntimeException e) {
            throw new Refused("ADD to key '" + key + "': " + e.getMessage());
        }
    }

    private Buffer check(Reader r) {
        List<String> keys = r.keys();
        if (!r.done()) {
            return null;
        }
        return Buffer.buffer().appendByte(state.check(keys) ? PyTorchStoreWire.READY : PyTorchStoreWire.NOT_READY);
    }

    private Buffer await(Reader r) {
        List<String> keys = r.keys();
        if (!r.done()) {
            return null;
        }
        StoreWaiter w = state.await(keys, values -> context.runOnContext(v -> woken()));
        if (!closed) {
            waiting = w;
        }
        return null;
    }

    /** The WAIT's keys are all set: it is answered, and the requests after it are served. */
    private void woken() {
        if (closed || waiting == null) {
            return;
        }
        waiting = null;
        socket.write(Buffer.buffer().appendByte(PyTorchStoreWire.STOP_WAITING));
        serveWhatArrived();
    }

    private Buffer append(Reader r) {
        String key = r.string();
        byte[] value = r.bytes();
        if (r.done()) {
            state.append(key, value);
        }
        return null;
    }

    private Buffer multiGet(Reader r) {
        List<String> keys = r.keys();
        if (!r.done()) {
            return null;
        }
        Buffer answer = Buffer.buffer();
        for (String key : keys) {
            answer.appendBuffer(vector(present(key)));
        }
        return answer;
    }

    private Buffer multiSet(Reader r) {
        long n = r.count();
        Map<String, byte[]> entries = new LinkedHashMap<>();
        for (long i = 0; i < n && r.done(); i++) {
            String key = r.string();
            byte[] value = r.bytes();
            if (r.done()) {
                entries.put(key, value);
            }
        }
        if (r.done()) {
            state.multiSet(entries);
        }
        return null;
    }

    /**
     * Ends this connection's WAIT. When the keys came first and the STOP_WAITING is not written yet, it is written
     * now, before the WAIT_CANCELED, as PyTorch's server (which answers a wait at once) would have.
     */
    private Buffer cancelWait() {
        StoreWaiter w = waiting;
        waiting = null;
        Buffer answer = Buffer.buffer();
        if (w != null && !state.cancel(w)) {
            answer.appendByte(PyTorchStoreWire.STOP_WAITING);
        }
        return answer.appendByte(PyTorchStoreWire.WAIT_CANCELED);
    }

    private Buffer ping(Reader r) {
        int nonce = r.intValue();
        return r.done() ? Buffer.buffer().appendIntLE(nonce) : null;
    }

    private Buffer delete(Reader r) {
        String key = r.string();
        return r.done() ? longAnswer(state.delete(key) ? 1 : 0) : null;
    }

    private static Buffer longAnswer(long v) {
        return Buffer.buffer().appendLongLE(v);
    }

    private static Buffer vector(byte[] v) {
        return Buffer.buffer().appendLongLE(v.length).appendBytes(v);
    }

    private void refuse(String why) {
        LOG.log(System.Logger.Level.WARNING, "closing the PyTorch TCPStore connection from {0}: {1}",
                socket.remoteAddress(), why);
        closed();
        socket.close();
    }

    /** A request this server does not serve. */
    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** Reads a request from a buffer that may hold only part of it; {@link #complete} says whether all was there. */
    private static final class Reader {
        private final Buffer in;
        int at;
        boolean complete = true;

        Reader(Buffer in) {
            this.in = in;
        }

        int command() {
            if (in.length() < 1) {
                complete = false;
                return -1;
            }
            at = 1;
            return in.getByte(0) & 0xff;
        }

        /** True when everything read so far was there. */
        boolean done() {
            return complete;
        }

        long longValue() {
            if (!complete || in.length() - at < 8) {
                complete = false;
                return 0;
            }
            long v = in.getLongLE(at);
            at += 8;
            return v;
        }

        int intValue() {
            if (!complete || in.length() - at < 4) {
                complete = false;
                return 0;
            }
            int v = in.getIntLE(at);
            at += 4;
            return v;
        }

        /** A count of keys or entries, bounded so a bad frame cannot make this server loop for long. */
        long count() {
            long n = longValue();
            if (complete && (n < 0 || n > 1 << 20)) {
                throw new Refused("a request for " + Long.toUnsignedString(n) + " keys");
            }
            return n;
        }

        byte[] bytes() {
            long n = longValue();
            if (!complete) {
                return null;
            }
            if (n < 0 || n > PyTorchStoreWire.MAX_BYTES) {
                throw new Refused("a string or value of " + Long.toUnsignedString(n) + " bytes (at most "
                        + PyTorchStoreWire.MAX_BYTES + ")");
            }
            if (in.length() - at < n) {
                complete = false;
                return null;
            }
            byte[] b = in.getBytes(at, at + (int) n);
            at += (int) n;
            return b;
        }

        String string() {
            byte[] b = bytes();
            return b == null ? null : new String(b, StandardCharsets.UTF_8);
        }

        List<String> keys() {
            long n = count();
            if (!complete) {
                return null;
            }
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < n && complete; i++) {
                keys.add(string());
            }
            return keys;
        }
    }
}
