package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.PyTorchStoreWire;
import io.tensorbus.distributed.impl.PyTorchStoreWire.Answer;
import io.tensorbus.distributed.impl.PyTorchStoreWire.Command;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreCounter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A client of a TCPStore that PyTorch hosts ({@code torch.distributed.TCPStore(..., is_master=True)}, or the store
 * of {@code init_process_group(init_method="tcp://...")}), speaking the wire of the server's release
 * ({@link PyTorchWire}; from 2.2 every connection opens with a validation): the keys and values are the ones Python
 * code sees. Like PyTorch's own client it sends one request at a time on one connection; a wait that times out drops
 * the connection (the server forgets a closed connection's waits on either wire) and the next request opens a new
 * one. PyTorch's store authenticates nothing, so neither can this client: use it on loopback or a network you trust,
 * as PyTorch's documentation says of its own. Thread-safe; never blocks.
 */
public final class PyTorchTcpStore implements Store {
    private final NetClient client;
    private final String host;
    private final int port;
    private final Context context;
    private final PyTorchWire wire;
    private final ArrayDeque<Request> queue = new ArrayDeque<>();
    private volatile Duration timeout;
    // The fields below change on the context only.
    private NetSocket socket;
    private Buffer received = Buffer.buffer();
    private Request current;
    private boolean closed;
    /** Whether the server ever answered this client: a silent one may speak another wire. */
    private boolean heard;
    /** The server this client hosts ({@link #host}), closed with it. */
    private volatile PyTorchStoreServer hosted;
    private static final long RETRY_NANOS = 100_000_000L;
    /** PyTorch's {@code initKey_}: sent as is, without the {@code /} of user keys. */
    private static final byte[] INIT_KEY = "init/".getBytes(StandardCharsets.UTF_8);

    /** One request and how its answer is read. */
    private record Request(Buffer bytes, Answer answer, Function<Buffer, Object> decode, Duration timeout,
                           String what, Promise<Object> done) {
    }

    private PyTorchTcpStore(Vertx vertx, String host, int port, Duration timeout, PyTorchWire wire) {
        this.client = vertx.createNetClient(new NetClientOptions().setConnectTimeout((int) Math.min(
                Integer.MAX_VALUE, StoreChecks.millis(timeout))));
        this.host = host;
        this.port = port;
        this.context = vertx.getOrCreateContext();
        this.timeout = timeout;
        this.wire = wire;
    }

    /**
     * Connects to the TCPStore at {@code host:port}.
     *
     * @param timeout how long a get, a wait and the connection itself may take (PyTorch's store timeout)
     * @param wire the wire of the PyTorch release that hosts the store
     * @return the store once connected; failed naming the address when nobody answers there
     * @throws IllegalArgumentException for a port outside 1..65535 or a timeout that is not positive
     */
    public static Future<PyTorchTcpStore> connect(Vertx vertx, String host, int port, Duration timeout,
                                                  PyTorchWire wire) {
        Objects.requireNonNull(vertx, "vertx");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(wire, "wire");
        StoreChecks.timeout(timeout);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("a TCPStore port is in 1..65535, got " + port);
        }
        PyTorchTcpStore store = new PyTorchTcpStore(vertx, host, port, timeout, wire);
        Promise<PyTorchTcpStore> connected = Promise.promise();
        long deadline = System.nanoTime() + timeout.toNanos();
        store.context.runOnContext(v -> store.openBefore(deadline, vertx, connected));
        return connected.future();
    }

    /**
     * Hosts a TCPStore for PyTorch clients on {@code host:port} ({@link PyTorchStoreServer}) and connects to it, as
     * PyTorch's {@code TCPStore(is_master=True)} does; closing the client closes the server. The server serves
     * clients of either wire; this one speaks {@code wire}.
     *
     * @param port the port to listen on, 0 for any free one ({@link #port()} tells which)
     * @throws IllegalArgumentException for a port outside 0..65535 or a timeout that is not positive
     */
    public static Future<PyTorchTcpStore> host(Vertx vertx, String host, int port, Duration timeout,
                                               PyTorchWire wire) {
        return PyTorchStoreServer.start(vertx, host, port).compose(server -> connect(vertx, host, server.port(),
                timeout, wire).map(client -> {
                    client.hosted = server;
                    return client;
                }).onFailure(e -> server.close()));
    }

    /** The wire this client speaks. */
    public PyTorchWire wire() {
        return wire;
    }

    /** The port of the store this client talks to. */
    public int port() {
        return port;
    }

    /** Connects, retrying a refused connection every 100 ms until {@code deadline}, as PyTorch's client does. */
    private void openBefore(long deadline, Vertx vertx, Promise<PyTorchTcpStore> connected) {
        open().onComplete(r -> {
            if (r.succeeded()) {
                connected.complete(this);
            } else if (System.nanoTime() + RETRY_NANOS < deadline) {
                vertx.setTimer(RETRY_NANOS / 1_000_000, id -> openBefore(deadline, vertx, connected));
            } else {
                client.close();
                connected.fail(r.cause());
            }
        });
    }

    /**
     * What PyTorch's TCPStore constructor does when it waits for workers: adds 1 to the counter {@code init/}
     * (outside the {@code /} namespace of user keys) and, on the process that hosts the store, waits until
     * {@code numWorkers} processes have. A PyTorch master waits for this from every client, JVM ones included.
     *
     * @throws IllegalArgumentException when {@code numWorkers} is below 1
     */
    public Future<Void> waitForWorkers(int numWorkers, boolean isServer) {
        if (numWorkers < 1) {
            throw new IllegalArgumentException("numWorkers=" + numWorkers + " must be at least 1");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        return addToInitKey(1).compose(n -> !isServer ? Future.succeededFuture()
                : StoreCounter.awaitAtLeast(context.owner(), () -> addToInitKey(0), n, numWorkers, deadline,
                        seen -> "only " + seen + " of " + numWorkers + " workers reached the PyTorch TCPStore at "
                                + address() + " within " + StoreChecks.describe(timeout)));
    }

    private Future<Long> addToInitKey(long delta) {
        return call(PyTorchStoreWire.request(wire, Command.ADD, INIT_KEY, delta), Answer.LONG, b -> b.getLongLE(0),
                timeout, "add to key 'init/'").map(Long.class::cast);
    }

    private Future<NetSocket> open() {
        if (socket != null) {
            return Future.succeededFuture(socket);
        }
        return client.connect(port, host).recover(e -> Future.failedFuture(new IllegalStateException(
                "cannot reach the PyTorch TCPStore at " + address() + ": " + e.getMessage(), e))).map(s -> {
                    socket = s;
                    received = Buffer.buffer();
                    s.handler(this::arrived);
                    s.closeHandler(v -> lost(s));
                    if (wire == PyTorchWire.V2_2) {
                        s.write(PyTorchStoreWire.validation());
                    }
                    return s;
                });
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return call(PyTorchStoreWire.request(wire, Command.SET, key, copy), Answer.NONE, b -> null, timeout,
                "set of key '" + key + "'").mapEmpty();
    }

    /** {@inheritDoc} As PyTorch's client: waits for the key (up to {@link #timeout()}), then reads it. */
    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return wait(List.of(key), timeout).compose(v -> call(PyTorchStoreWire.request(wire, Command.GET, key),
                Answer.VECTOR, PyTorchTcpStore::vector, timeout, "get of key '" + key + "'"))
                .map(byte[].class::cast);
    }

    @Override
    public Future<Long> add(String key, long delta) {
        StoreChecks.key(key);
        return call(PyTorchStoreWire.request(wire, Command.ADD, key, delta), Answer.LONG, b -> b.getLongLE(0),
                timeout, "add to key '" + key + "'").map(Long.class::cast);
    }

    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        byte[] e = StoreChecks.value("expected", expected).clone();
        byte[] d = StoreChecks.value("desired", desired).clone();
        return call(PyTorchStoreWire.request(wire, Command.COMPARE_SET, key, e, d), Answer.VECTOR,
                PyTorchTcpStore::vector, timeout, "compare-set of key '" + key + "'").map(byte[].class::cast);
    }

    /** {@inheritDoc} A wait that times out drops the connection; the next request opens another. */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        List<String> copy = StoreChecks.keys(keys);
        StoreChecks.timeout(timeout);
        return call(PyTorchStoreWire.keysRequest(wire, Command.WAIT, copy), Answer.BYTE, b -> expect(b,
                PyTorchStoreWire.STOP_WAITING, "WAIT"), timeout, "wait for keys " + copy).mapEmpty();
    }

    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return call(PyTorchStoreWire.request(wire, Command.DELETE_KEY, key), Answer.LONG, b -> b.getLongLE(0) > 0,
                timeout, "delete of key '" + key + "'").map(Boolean.class::cast);
    }

    @Override
    public Future<Long> numKeys() {
        return call(PyTorchStoreWire.request(wire, Command.GET_NUM_KEYS), Answer.LONG, b -> b.getLongLE(0),
                timeout, "count of keys").map(Long.class::cast);
    }

    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return call(PyTorchStoreWire.keysRequest(wire, Command.CHECK, copy), Answer.BYTE, b -> {
            byte r = b.getByte(0);
            if (r != PyTorchStoreWire.READY && r != PyTorchStoreWire.NOT_READY) {
                throw new IllegalStateException("CHECK answered " + r + ", neither READY (0) nor NOT_READY (1)");
            }
            return r == PyTorchStoreWire.READY;
        }, timeout, "check of keys " + copy).map(Boolean.class::cast);
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = StoreChecks.timeout(timeout);
    }

    /** Fails what is pending and closes the connection; idempotent. */
    @Override
    public void close() {
        context.runOnContext(v -> {
            closed = true;
            failAll(new IllegalStateException("the PyTorch TCPStore client of " + address() + " is closed"));
            if (socket != null) {
                socket.close();
            }
            client.close();
            if (hosted != null) {
                hosted.close();
            }
        });
    }

    private static byte[] vector(Buffer b) {
        return b.getBytes(8, b.length());
    }

    private static Object expect(Buffer b, byte wanted, String command) {
        if (b.getByte(0) != wanted) {
            throw new IllegalStateException(command + " answered " + b.getByte(0) + ", expected " + wanted);
        }
        return null;
    }

    private Future<Object> call(Buffer bytes, Answer answer, Function<Buffer, Object> decode, Duration limit,
                                String what) {
        Promise<Object> done = Promise.promise();
        context.runOnContext(v -> {
            if (closed) {
                done.fail(new IllegalStateException("the PyTorch TCPStore client of " + address() + " is closed"));
                return;
            }
            queue.add(new Request(bytes, answer, decode, limit, what, done));
            next();
        });
        return done.future();
    }

    /** Sends the next request when none is out. On the context. */
    private void next() {
        if (current != null || queue.isEmpty()) {
            return;
        }
        Request r = queue.poll();
        current = r;
        long timer = context.owner().setTimer(StoreChecks.millis(r.timeout()), id -> timedOut(r));
        r.done().future().onComplete(x -> context.owner().cancelTimer(timer));
        open().compose(s -> s.write(r.bytes())).onComplete(w -> {
            if (w.failed()) {
                finish(r, null, w.cause());
            } else if (r.answer() == Answer.NONE) {
                finish(r, null, null);
            } else {
                read();
            }
        });
    }

    private void arrived(Buffer data) {
        heard = true;
        received.appendBuffer(data);
        read();
    }

    /** Completes the current request when its whole answer is there. On the context. */
    private void read() {
        Request r = current;
        if (r == null || r.answer() == Answer.NONE) {
            return;
        }
        Object value;
        try {
            long n = r.answer().length(received, 0);
            if (n < 0) {
                return;
            }
            Buffer answer = received.getBuffer(0, (int) n);
            received = received.getBuffer((int) n, received.length());
            value = r.decode().apply(answer);
        } catch (RuntimeException e) {
            drop();
            finish(r, null, new IllegalStateException("the PyTorch TCPStore at " + address() + " answered the "
                    + r.what() + " with bytes it does not send: " + e.getMessage(), e));
            return;
        }
        finish(r, value, null);
    }

    private void finish(Request r, Object value, Throwable failure) {
        if (current != r) {
            return;
        }
        current = null;
        if (failure == null) {
            r.done().tryComplete(value);
        } else {
            r.done().tryFail(failure);
        }
        next();
    }

    /** A request's answer did not come in time: the connection goes, since its answer may still come on it. */
    private void timedOut(Request r) {
        if (current != r) {
            return;
        }
        drop();
        String hint = heard ? "" : " (the server has answered nothing yet: does it speak this client's " + wire
                + " wire? PyTorch 1.13 speaks V1_13, 2.2 and later V2_2)";
        finish(r, null, new TimeoutException("PyTorch TCPStore " + address() + ": " + r.what() + " timed out after "
                + StoreChecks.describe(r.timeout()) + hint));
    }

    private void drop() {
        NetSocket s = socket;
        socket = null;
        received = Buffer.buffer();
        if (s != null) {
            s.close();
        }
    }

    private void lost(NetSocket s) {
        if (socket != s) {
            return;
        }
        socket = null;
        Request r = current;
        if (r != null) {
            finish(r, null, new IllegalStateException("the PyTorch TCPStore at " + address()
                    + " closed the connection during the " + r.what()));
        }
    }

    private void failAll(Throwable cause) {
        Request r = current;
        current = null;
        if (r != null) {
            r.done().tryFail(cause);
        }
        while (!queue.isEmpty()) {
            queue.poll().done().tryFail(cause);
        }
    }
}
