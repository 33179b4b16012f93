package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.TcpStore;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.spi.support.SecretHandshake;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static io.tensorbus.distributed.impl.TcpStoreProtocol.*;

/**
 * The client side of a {@code TcpStore}: one connection to the server, requests matched to replies by id. Calls
 * may come from any thread; replies are read on the connection's event loop. Every call has a deadline (the
 * timeout given, or the store's): past it the future fails with {@link TimeoutException} and a late reply is
 * ignored. When the connection drops, every pending and later call fails with an {@link IOException} naming the
 * server.
 */
public final class TcpStoreClient implements TcpStore {
    /** The timer of store requests ({@link io.tensorbus.distributed.metrics.TensorbusMetrics}). */
    public static final String STORE_METER = Meters.PREFIX + "store";
    private static final Meters.Operation[] METERS = new Meters.Operation[TcpStoreProtocol.MULTI_SET + 1];

    private static final System.Logger LOG = System.getLogger(TcpStoreClient.class.getName());
    private static final long FIRST_RETRY_MS = 50;
    private static final long MAX_RETRY_MS = 1000;

    private final Vertx vertx;
    private final String host;
    private final int port;
    private volatile Duration timeout;
    /** Kept in a field: Vert.x 5 closes a NetClient that nothing references, and its connection with it. */
    private final NetClient netClient;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Call> pending = new ConcurrentHashMap<>();
    private volatile NetSocket socket;
    /** Why calls fail from now on (connection lost or client closed); null while connected. */
    private volatile Throwable broken;

    /** A request in flight; {@code timer} is set before the request is written, so before any reply. */
    private record Call(Promise<Buffer> promise, ScheduledFuture<?>[] timer) {
    }

    private TcpStoreClient(Vertx vertx, String host, int port, Duration timeout) {
        this.vertx = vertx;
        this.host = host;
        this.port = port;
        this.timeout = timeout;
        int connectMs = (int) Math.min(StoreChecks.millis(timeout), 10_000);
        this.netClient = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true).setConnectTimeout(connectMs));
    }

    /**
     * Connects to the server at {@code host:port}, retrying with backoff (50 ms doubling to 1 s) until
     * {@code timeout} since the server may start later, proves {@code secret}, then checks that the server
     * speaks this protocol. A server that does not share the secret fails the future at once with an
     * {@link IOException} saying why.
     */
    public static Future<TcpStoreClient> connect(Vertx vertx, String host, int port, Duration timeout,
            JobSecret secret) {
        TcpStoreClient client = new TcpStoreClient(vertx, host, port, timeout);
        long deadline = System.nanoTime()
                + Math.min(StoreChecks.millis(timeout), Long.MAX_VALUE / 2_000_000) * 1_000_000;
        Promise<NetSocket> connected = Promise.promise();
        client.attempt(connected, deadline, FIRST_RETRY_MS);
        return connected.future()
                .compose(socket -> SecretHandshake.connect(socket, secret, TcpStoreServer.CHANNEL,
                                Duration.ofMillis(Math.min(SecretHandshake.TIMEOUT.toMillis(), leftMillis(deadline))),
                                vertx)
                        .recover(e -> Future.failedFuture(new IOException("TcpStore client could not join the "
                                + "server " + client.address() + ": " + e.getMessage(), e)))
                        .compose(v -> client.start(socket, deadline)))
                .onFailure(e -> client.netClient.close());
    }

    private static long leftMillis(long deadline) {
        return Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
    }

    /** {@code host:port} of the server. */
    public String address() {
        return host + ":" + port;
    }

    private void attempt(Promise<NetSocket> connected, long deadline, long delayMs) {
        netClient.connect(port, host).onComplete(result -> {
            if (result.succeeded()) {
                connected.complete(result.result());
                return;
            }
            long leftMs = (deadline - System.nanoTime()) / 1_000_000;
            if (leftMs <= 0) {
                connected.fail(new TimeoutException("TcpStore client could not connect to the server " + address()
                        + " within " + StoreChecks.describe(timeout) + " (last error: " + result.cause().getMessage()
                        + "); is the master running and reachable on that address?"));
                return;
            }
            vertx.setTimer(Math.max(1, Math.min(delayMs, leftMs)),
                    t -> attempt(connected, deadline, Math.min(delayMs * 2, MAX_RETRY_MS)));
        });
    }

    /** Wires the socket and sends the PING handshake. */
    private Future<TcpStoreClient> start(NetSocket connected, long deadline) {
        this.socket = connected;
        TcpStoreFrameParser parser = new TcpStoreFrameParser(REPLY_HEADER, this::onReply,
                why -> {
                    lose(new IOException("TcpStore server " + address() + " sent a malformed frame: " + why));
                    connected.close();
                });
        connected.handler(parser);
        connected.closeHandler(v -> lose(new IOException("lost the connection to the TcpStore server " + address()
                + " (the server closed it or died)")));
        connected.exceptionHandler(e -> LOG.log(System.Logger.Level.DEBUG,
                () -> "TcpStore connection to " + address() + " failed: " + e));
        long leftMs = leftMillis(deadline);
        long id = ids.incrementAndGet();
        Buffer ping = request(PING, id).appendIntLE(MAGIC).appendIntLE(VERSION);
        return call(id, ping, Duration.ofMillis(leftMs), "connection handshake").map(payload -> {
            TcpStoreReader in = new TcpStoreReader(payload);
            if (in.readInt("magic") != MAGIC || in.readInt("version") != VERSION) {
                throw new TcpStoreProtocolException("the PING reply is not from a TcpStore server");
            }
            return this;
        }).onFailure(e -> connected.close());
    }

    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        StoreChecks.value("value", value);
        return send(SET, f -> appendValue(appendKey(f, key), value), timeout, "set of key '" + key + "'")
                .mapEmpty();
    }

    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return send(GET, f -> appendKey(f, key).appendLongLE(StoreChecks.millis(timeout)), timeout,
                "get of key '" + key + "'").map(payload -> single(payload, "GET"));
    }

    @Override
    public Future<Long> add(String key, long delta) {
        StoreChecks.key(key);
        return send(ADD, f -> appendKey(f, key).appendLongLE(delta), timeout, "add to key '" + key + "'")
                .map(payload -> {
                    TcpStoreReader in = new TcpStoreReader(payload);
                    long sum = in.readLong("sum");
                    in.expectEnd("ADD reply");
                    return sum;
                });
    }

    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        StoreChecks.value("expected", expected);
        StoreChecks.value("desired", desired);
        return send(COMPARE_SET, f -> appendValue(appendValue(appendKey(f, key), expected), desired), timeout,
                "compareSet of key '" + key + "'").map(payload -> single(payload, "COMPARE_SET"));
    }

    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        List<String> copy = StoreChecks.keys(keys);
        StoreChecks.timeout(timeout);
        return send(WAIT, f -> appendKeys(f, copy).appendLongLE(StoreChecks.millis(timeout)), timeout,
                "wait for keys " + copy).mapEmpty();
    }

    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return send(DELETE, f -> appendKey(f, key), timeout, "deleteKey of key '" + key + "'")
                .map(payload -> flag(payload, "DELETE"));
    }

    @Override
    public Future<Long> numKeys() {
        return send(NUM_KEYS, f -> { }, timeout, "numKeys").map(payload -> {
            TcpStoreReader in = new TcpStoreReader(payload);
            long count = in.readLong("count");
            in.expectEnd("NUM_KEYS reply");
            return count;
        });
    }

    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return send(CHECK, f -> appendKeys(f, copy), timeout, "check of keys " + copy)
                .map(payload -> flag(payload, "CHECK"));
    }

    @Override
    public Future<Void> append(String key, byte[] value) {
        StoreChecks.key(key);
        StoreChecks.value("value", value);
        return send(APPEND, f -> appendValue(appendKey(f, key), value), timeout, "append to key '" + key + "'")
                .mapEmpty();
    }

    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return send(MULTI_GET, f -> appendKeys(f, copy).appendLongLE(StoreChecks.millis(timeout)), timeout,
                "multiGet of keys " + copy).map(payload -> {
                    TcpStoreReader in = new TcpStoreReader(payload);
                    int count = in.readCount("values", 4);
                    List<byte[]> values = new ArrayList<>(count);
                    for (int i = 0; i < count; i++) {
                        values.add(in.readValue("values[" + i + "]"));
                    }
                    in.expectEnd("MULTI_GET reply");
                    return values;
                });
    }

    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> copy = StoreChecks.entries(entries);
        return send(MULTI_SET, f -> {
            f.appendIntLE(copy.size());
            copy.forEach((key, value) -> appendValue(appendKey(f, key), value));
        }, timeout, "multiSet of keys " + copy.keySet()).mapEmpty();
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = StoreChecks.timeout(timeout);
    }

    /** Closes the connection; pending and later calls fail with {@link IllegalStateException}. Idempotent. */
    @Override
    public void close() {
        closeAsync();
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public boolean isServer() {
        return false;
    }

    /** {@link #close()}, with a future that completes when the socket and the client are closed. */
    @Override
    public Future<Void> closeAsync() {
        lose(new IllegalStateException("TcpStore client of " + address() + " is closed"));
        NetSocket current = socket;
        Future<Void> socketClosed = current == null ? Future.succeededFuture() : current.close();
        return socketClosed.transform(done -> netClient.close());
    }

    /**
     * Sends a request; {@code what} names it in timeout messages.
     *
     * @throws IllegalArgumentException at once when the request exceeds the frame limit
     */
    private Future<Buffer> send(byte command, Consumer<Buffer> fields, Duration deadline, String what) {
        long begin = Meters.start();
        long id = ids.incrementAndGet();
        Buffer frame = request(command, id);
        fields.accept(frame);
        Future<Buffer> reply = call(id, frame, deadline, what);
        if (begin != 0) {
            Meters.Operation m = meters(command);
            reply.onComplete(r -> m.record(begin, 0, r.cause()));
        }
        return reply;
    }

    /** The meters of requests {@code command}, resolved at its first use (a race resolves the same twice). */
    private static Meters.Operation meters(byte command) {
        Meters.Operation m = METERS[command];
        if (m == null) {
            m = Meters.operation(STORE_METER, false, "store", "tcp", "op",
                    TcpStoreProtocol.commandName(command).toLowerCase(Locale.ROOT));
            METERS[command] = m;
        }
        return m;
    }

    private Future<Buffer> call(long id, Buffer frame, Duration deadline, String what) {
        finish(frame);
        Throwable cause = broken;
        if (cause != null) {
            return Future.failedFuture(cause);
        }
        Call call = new Call(Promise.promise(), new ScheduledFuture<?>[1]);
        pending.put(id, call);
        call.timer[0] = StoreTimers.schedule(() -> {
            if (pending.remove(id, call)) {
                call.promise.tryFail(new TimeoutException("TcpStore " + address() + ": " + what + " timed out after "
                        + StoreChecks.describe(deadline) + (waits(frame)
                                ? " (not all of these keys were set by then)"
                                : " (the server did not answer)")));
            }
        }, deadline);
        call.promise.future().onComplete(done -> call.timer[0].cancel(false));
        socket.write(frame).onFailure(e -> {
            if (pending.remove(id, call)) {
                call.promise.tryFail(new IOException("cannot send to the TcpStore server " + address() + ": " + e, e));
            }
        });
        Throwable lost = broken;
        if (lost != null && pending.remove(id, call)) {
            // lose() ran between the check above and pending.put, so it did not see this call.
            call.promise.tryFail(lost);
        }
        return call.promise.future();
    }

    /** Whether the request waits for keys on the server (so a timeout means keys missing, not a silent server). */
    private static boolean waits(Buffer request) {
        byte command = request.getByte(4);
        return command == GET || command == WAIT || command == MULTI_GET;
    }

    private void onReply(Buffer frame) {
        TcpStoreReader in = new TcpStoreReader(frame);
        long id = in.readLong("request id");
        byte status = in.readByte("status");
        Call call = pending.remove(id);
        if (call == null) {
            // Its deadline passed: the caller has its TimeoutException already.
            LOG.log(System.Logger.Level.DEBUG, () -> "TcpStore " + address() + ": late reply to request " + id);
            return;
        }
        Buffer payload = frame.getBuffer(REPLY_HEADER, frame.length());
        if (status == STATUS_OK) {
            call.promise.tryComplete(payload);
        } else if (status == STATUS_ERROR) {
            call.promise.tryFail(new IllegalStateException("TcpStore server " + address() + " refused the request: "
                    + payload.toString(StandardCharsets.UTF_8)));
        } else {
            call.promise.tryFail(new IOException("TcpStore server " + address() + " sent unknown status " + status));
            lose(new IOException("TcpStore server " + address() + " sent a malformed reply (status " + status + ")"));
            socket.close();
        }
    }

    /** Fails every pending call with {@code cause}, and every later one. */
    private void lose(Throwable cause) {
        synchronized (this) {
            if (broken == null) {
                broken = cause;
            }
        }
        Throwable reason = broken;
        for (Long id : new ArrayList<>(pending.keySet())) {
            Call call = pending.remove(id);
            if (call != null) {
                call.promise.tryFail(reason);
            }
        }
    }

    private static byte[] single(Buffer payload, String command) {
        TcpStoreReader in = new TcpStoreReader(payload);
        byte[] value = in.readValue("value");
        in.expectEnd(command + " reply");
        return value;
    }

    private static boolean flag(Buffer payload, String command) {
        TcpStoreReader in = new TcpStoreReader(payload);
        byte flag = in.readByte("flag");
        in.expectEnd(command + " reply");
        return flag != 0;
    }
}
