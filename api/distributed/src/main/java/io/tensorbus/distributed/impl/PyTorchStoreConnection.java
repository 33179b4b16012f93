package io.tensorbus.distributed.impl;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One PyTorch client's connection to a {@code PyTorchStoreServer}: reads its requests on PyTorch 1.13's wire
 * ({@link PyTorchStoreWire}) one at a time, answers each from the shared {@link StoreState}, and holds later bytes
 * while a WAIT waits (PyTorch's client sends nothing else meanwhile). A request it does not serve (a key watch, the
 * 2.2+ wire, a GET of an absent key, a length past {@link PyTorchStoreWire#MAX_BYTES}) closes the connection,
 * saying why in the log. On the socket's context.
 */
public final class PyTorchStoreConnection {
    private static final System.Logger LOG = System.getLogger(PyTorchStoreConnection.class.getName());

    private final NetSocket socket;
    private final StoreState state;
    private final Context context;
    private Buffer received = Buffer.buffer();
    private StoreWaiter waiting;
    private boolean closed;

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

    /** Serves every whole request that arrived, unless a WAIT holds the connection. */
    private void serveWhatArrived() {
        while (!closed && waiting == null) {
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

    /** Serves the request at the start of {@code r}; null when it has no answer (yet), or is not all there. */
    private Buffer serveOne(Reader r) {
        int command = r.command();
        if (command < 0) {
            return null;
        }
        return switch ((byte) command) {
            case PyTorchStoreWire.SET -> set(r);
            case PyTorchStoreWire.COMPARE_SET -> compareSet(r);
            case PyTorchStoreWire.GET -> get(r);
            case PyTorchStoreWire.ADD -> add(r);
            case PyTorchStoreWire.CHECK -> check(r);
            case PyTorchStoreWire.WAIT -> await(r);
            case PyTorchStoreWire.GET_NUM_KEYS -> r.done() ? longAnswer(state.size()) : null;
            case PyTorchStoreWire.DELETE_KEY -> delete(r);
            default -> throw new Refused("command " + command + " is not served (PyTorch 1.13's SET..DELETE_KEY"
                    + " are, but not WATCH_KEY; a 2.2+ client opens with a validation this server does not speak)");
        };
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
        byte[] value = state.get(key);
        if (value == null) {
            throw new Refused("GET of absent key '" + key + "' (PyTorch's client waits for a key before it gets it)");
        }
        return vector(value);
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
            long n = longValue();
            if (!complete) {
                return null;
            }
            if (n < 0 || n > 1 << 20) {
                throw new Refused("a request for " + Long.toUnsignedString(n) + " keys");
            }
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < n && complete; i++) {
                keys.add(string());
            }
            return keys;
        }
    }
}
