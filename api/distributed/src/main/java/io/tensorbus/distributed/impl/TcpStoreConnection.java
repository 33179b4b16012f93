package io.tensorbus.distributed.impl;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.tensorbus.distributed.impl.TcpStoreProtocol.*;

/**
 * One client connection of a {@code TcpStore} server: decodes requests, applies them to the shared
 * {@link StoreState}, and answers. Calls that wait (GET, WAIT, MULTI_GET) become waiters in the state and are
 * answered when their keys are set, possibly from another connection's thread; they are dropped when their
 * timeout passes (the client has failed them by then) or when the connection closes. A malformed frame closes
 * this connection only.
 */
final class TcpStoreConnection {

    private static final System.Logger LOG = System.getLogger(TcpStoreConnection.class.getName());

    private final Vertx vertx;
    private final NetSocket socket;
    private final StoreState state;
    private final Supplier<String> server;
    private final TcpStoreFrameParser parser;
    private final Set<Waiting> waiting = ConcurrentHashMap.newKeySet();

    /** A waiting call; {@code fired} and {@code timer} are guarded by the object's lock. */
    private static final class Waiting {
        StoreWaiter waiter;
        long timer = -1;
        boolean fired;
    }

    TcpStoreConnection(Vertx vertx, NetSocket socket, StoreState state, Supplier<String> server) {
        this.vertx = vertx;
        this.socket = socket;
        this.state = state;
        this.server = server;
        this.parser = new TcpStoreFrameParser(REQUEST_HEADER, this::onFrame, this::malformed);
        socket.handler(parser);
        socket.exceptionHandler(e -> LOG.log(System.Logger.Level.DEBUG,
                () -> server.get() + ": connection from " + socket.remoteAddress() + " failed: " + e));
    }

    /** Closes the socket; {@link #closed()} follows from the close handler. */
    void close() {
        socket.close();
    }

    /** Drops the calls still waiting: nobody will read their answers. */
    void closed() {
        parser.fail();
        for (Waiting call : waiting) {
            cancel(call);
        }
        waiting.clear();
    }

    private void onFrame(Buffer frame) {
        TcpStoreReader in = new TcpStoreReader(frame);
        byte command = in.readByte("command");
        long id = in.readLong("request id");
        try {
            dispatch(command, id, in);
        } catch (TcpStoreProtocolException e) {
            malformed(commandName(command) + " request " + id + ": " + e.getMessage());
        } catch (RuntimeException e) {
            // The request was well formed but cannot be done (add on a non-number, an overflow, a reply too big).
            replyError(id, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private void dispatch(byte command, long id, TcpStoreReader in) {
        switch (command) {
            case PING -> ping(id, in);
            case SET -> {
                String key = in.readKey("key");
                byte[] value = in.readValue("value");
                in.expectEnd("SET");
                state.set(key, value);
                replyOk(id, Buffer.buffer());
            }
            case GET -> {
                String key = in.readKey("key");
                long timeoutMs = readTimeout(in);
                in.expectEnd("GET");
                await(id, List.of(key), timeoutMs, values -> appendValue(Buffer.buffer(), values.get(0)));
            }
            case ADD -> {
                String key = in.readKey("key");
                long delta = in.readLong("delta");
                in.expectEnd("ADD");
                replyOk(id, Buffer.buffer().appendLongLE(state.add(key, delta)));
            }
            case COMPARE_SET -> {
                String key = in.readKey("key");
                byte[] expected = in.readValue("expected");
                byte[] desired = in.readValue("desired");
                in.expectEnd("COMPARE_SET");
                replyOk(id, appendValue(Buffer.buffer(), state.compareSet(key, expected, desired)));
            }
            case WAIT -> {
                List<String> keys = in.readKeys("keys");
                long timeoutMs = readTimeout(in);
                in.expectEnd("WAIT");
                await(id, keys, timeoutMs, values -> Buffer.buffer());
            }
            case DELETE -> {
                String key = in.readKey("key");
                in.expectEnd("DELETE");
                replyOk(id, Buffer.buffer().appendByte(state.delete(key) ? (byte) 1 : 0));
            }
            case NUM_KEYS -> {
                in.expectEnd("NUM_KEYS");
                replyOk(id, Buffer.buffer().appendLongLE(state.size()));
            }
            case CHECK -> {
                List<String> keys = in.readKeys("keys");
                in.expectEnd("CHECK");
                replyOk(id, Buffer.buffer().appendByte(state.check(keys) ? (byte) 1 : 0));
            }
            case APPEND -> {
                String key = in.readKey("key");
                byte[] value = in.readValue("value");
                in.expectEnd("APPEND");
                state.append(key, value);
                replyOk(id, Buffer.buffer());
            }
            case MULTI_GET -> {
                List<String> keys = in.readKeys("keys");
                long timeoutMs = readTimeout(in);
                in.expectEnd("MULTI_GET");
                await(id, keys, timeoutMs, TcpStoreConnection::values);
            }
            case MULTI_SET -> {
                state.multiSet(readEntries(in));
                replyOk(id, Buffer.buffer());
            }
            default -> throw new TcpStoreProtocolException("unknown command " + command);
        }
    }

    private void ping(long id, TcpStoreReader in) {
        int magic = in.readInt("magic");
        int version = in.readInt("version");
        in.expectEnd("PING");
        if (magic != MAGIC) {
            throw new TcpStoreProtocolException(String.format("bad magic 0x%08x (not a TcpStore client)", magic));
        }
        if (version != VERSION) {
            replyError(id, "protocol version " + version + " is not supported; this server speaks " + VERSION);
            return;
        }
        replyOk(id, Buffer.buffer().appendIntLE(MAGIC).appendIntLE(VERSION));
    }

    private static long readTimeout(TcpStoreReader in) {
        long timeoutMs = in.readLong("timeout (ms)");
        if (timeoutMs <= 0) {
            throw new TcpStoreProtocolException("timeout " + timeoutMs + " ms is not positive");
        }
        return timeoutMs;
    }

    private static Map<String, byte[]> readEntries(TcpStoreReader in) {
        int count = in.readCount("entries", 8);
        Map<String, byte[]> entries = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            String key = in.readKey("entries[" + i + "] key");
            entries.put(key, in.readValue("entries[" + i + "] value"));
        }
        in.expectEnd("MULTI_SET");
        return entries;
    }

    private static Buffer values(List<byte[]> values) {
        Buffer payload = Buffer.buffer().appendIntLE(values.size());
        for (byte[] value : values) {
            appendValue(payload, value);
        }
        return payload;
    }

    /** Answers when every key is set; keeps the waiter until then, its timeout, or the connection's close. */
    private void await(long id, List<String> keys, long timeoutMs, Function<List<byte[]>, Buffer> payload) {
        Waiting call = new Waiting();
        call.waiter = state.await(keys, values -> {
            synchronized (call) {
                call.fired = true;
                if (call.timer >= 0) {
                    vertx.cancelTimer(call.timer);
                }
            }
            waiting.remove(call);
            answer(id, payload, values);
        });
        synchronized (call) {
            if (!call.fired) {
                // The client fails the call at its own deadline; this only frees the waiter then.
                call.timer = vertx.setTimer(timeoutMs, t -> {
                    waiting.remove(call);
                    state.cancel(call.waiter);
                });
                waiting.add(call);
            }
        }
    }

    private void answer(long id, Function<List<byte[]>, Buffer> payload, List<byte[]> values) {
        try {
            replyOk(id, payload.apply(values));
        } catch (RuntimeException tooBig) {
            replyError(id, tooBig.getMessage());
        }
    }

    private void cancel(Waiting call) {
        synchronized (call) {
            if (call.timer >= 0) {
                vertx.cancelTimer(call.timer);
            }
        }
        state.cancel(call.waiter);
    }

    private void replyOk(long id, Buffer payload) {
        Buffer frame = reply(id, STATUS_OK).appendBuffer(payload);
        socket.write(finish(frame));
    }

    private void replyError(long id, String message) {
        byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
        socket.write(finish(reply(id, STATUS_ERROR).appendBytes(text, 0, Math.min(text.length, 64 * 1024))));
    }

    private void malformed(String why) {
        parser.fail();
        LOG.log(System.Logger.Level.WARNING, server.get() + ": closing the connection from " + socket.remoteAddress()
                + ": malformed frame: " + why);
        socket.close();
    }
}
