package io.tensorbus.distributed;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreMemory;
import io.tensorbus.distributed.impl.StoreState;
import io.tensorbus.distributed.impl.TcpStoreClient;
import io.tensorbus.distributed.impl.TcpStoreServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A {@link Store} served over TCP by one process (the master) to the others, as PyTorch's {@code TCPStore}, on
 * Vert.x: {@link #server} binds a {@code NetServer} and is itself a view of the data (in-process, without a
 * socket); {@link #client} connects to it, retrying until the timeout since the master may start later. Calls
 * return at once and never block an event loop. {@link #get}, {@link #multiGet} and {@link #wait} wait on the
 * server, which answers when the keys are set; the caller's future fails with
 * {@link java.util.concurrent.TimeoutException} at its deadline (a late answer is ignored). When a client's
 * connection drops, its pending and later calls fail with an {@link java.io.IOException} naming the server.
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
 *
 * <h2>The job's secret</h2>
 * Before its first request, every connection proves the job's secret ({@code SecretHandshake}, channel
 * {@code "store"}), so a process that does not know it can neither read nor write a key. The factories without
 * a {@code secret} argument take the process's: {@code TENSORBUS_SECRET}, else the file
 * {@code TENSORBUS_SECRET_FILE} names ({@code tensorbus launch} sets the first for its ranks). Without a secret
 * the store proves nothing, and its server may listen on loopback addresses only.
 */
public final class TcpStore implements Store {

    /** The timeout of the factories without one: 30 minutes, as PyTorch's {@code default_pg_timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private final String host;
    private final int port;
    private final Store delegate;
    private final TcpStoreServer server;
    private final TcpStoreClient client;

    private TcpStore(String host, int port, Store delegate, TcpStoreServer server, TcpStoreClient client) {
        this.host = host;
        this.port = port;
        this.delegate = delegate;
        this.server = server;
        this.client = client;
    }

    /**
     * Starts the server of a store on {@code host:port}; the future completes once it listens, with the store
     * that is also its in-process view.
     *
     * @param vertx the Vert.x instance whose event loops serve connections
     * @param host the address to bind, e.g. {@code "127.0.0.1"} or {@code "0.0.0.0"}
     * @param port the port, or 0 for a free one (read it with {@link #port()} and publish it)
     * @param timeout how long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait
     * @param secret the job's secret every client must prove, or {@link JobSecret#none()} (then {@code host}
     *        must be a loopback address)
     * @return a future that fails with {@link IllegalStateException} naming {@code host:port} when the port is in
     *         use or cannot be bound, or when {@code host} is not a loopback address and there is no secret
     * @throws NullPointerException when an argument is null
     * @throws IllegalArgumentException when the host is blank, the port outside [0, 65535] or the timeout not
     *                                  positive
     */
    public static Future<TcpStore> server(Vertx vertx, String host, int port, Duration timeout, JobSecret secret) {
        Objects.requireNonNull(secret, "secret must not be null (JobSecret.none() for none)");
        Objects.requireNonNull(vertx, "vertx must not be null");
        StoreChecks.host(host);
        StoreChecks.port(port, true);
        StoreChecks.timeout(timeout);
        StoreState state = new StoreState();
        return TcpStoreServer.listen(vertx, host, port, state, secret).map(server -> {
            String name = "TcpStore server " + host + ":" + server.port();
            return new TcpStore(host, server.port(), new StoreMemory(state, timeout, name), server, null);
        });
    }

    /**
     * {@link #server(Vertx, String, int, Duration, JobSecret)} with the process's secret (see the class comment).
     *
     * @throws IllegalArgumentException also when the process's secret is unusable (too short, an unreadable
     *                                  or unprotected file)
     */
    public static Future<TcpStore> server(Vertx vertx, String host, int port, Duration timeout) {
        return server(vertx, host, port, timeout, JobSecret.fromEnvironment(System.getenv()));
    }

    /** {@link #server(Vertx, String, int, Duration)} with the {@link #DEFAULT_TIMEOUT}. */
    public static Future<TcpStore> server(Vertx vertx, String host, int port) {
        return server(vertx, host, port, DEFAULT_TIMEOUT);
    }

    /**
     * Connects to the server of a store at {@code host:port}, retrying (50 ms, doubling to 1 s) until
     * {@code timeout}, since the master may start after this process.
     *
     * @param vertx the Vert.x instance whose event loop runs the connection
     * @param host the master's address
     * @param port the master's port, 1 to 65535
     * @param timeout how long to try connecting, and how long each call may take or wait
     * @param secret the job's secret to prove to the server, or {@link JobSecret#none()}
     * @return a future that fails with {@link java.util.concurrent.TimeoutException} naming {@code host:port} and
     *         the timeout when no server answered in time, and with an {@link java.io.IOException} saying why when
     *         the server and this process do not share the secret
     * @throws NullPointerException when an argument is null
     * @throws IllegalArgumentException when the host is blank, the port outside [1, 65535] or the timeout not
     *                                  positive
     */
    public static Future<TcpStore> client(Vertx vertx, String host, int port, Duration timeout, JobSecret secret) {
        Objects.requireNonNull(secret, "secret must not be null (JobSecret.none() for none)");
        Objects.requireNonNull(vertx, "vertx must not be null");
        StoreChecks.host(host);
        StoreChecks.port(port, false);
        StoreChecks.timeout(timeout);
        return TcpStoreClient.connect(vertx, host, port, timeout, secret)
                .map(client -> new TcpStore(host, port, client, null, client));
    }

    /**
     * {@link #client(Vertx, String, int, Duration, JobSecret)} with the process's secret (see the class comment).
     *
     * @throws IllegalArgumentException also when the process's secret is unusable
     */
    public static Future<TcpStore> client(Vertx vertx, String host, int port, Duration timeout) {
        return client(vertx, host, port, timeout, JobSecret.fromEnvironment(System.getenv()));
    }

    /** {@link #client(Vertx, String, int, Duration)} with the {@link #DEFAULT_TIMEOUT}. */
    public static Future<TcpStore> client(Vertx vertx, String host, int port) {
        return client(vertx, host, port, DEFAULT_TIMEOUT);
    }

    /**
     * PyTorch's {@code TCPStore(host, port, is_master=...)}: {@link #server} when {@code isServer}, else
     * {@link #client}.
     */
    public static Future<TcpStore> create(Vertx vertx, String host, int port, boolean isServer, Duration timeout) {
        return isServer ? server(vertx, host, port, timeout) : client(vertx, host, port, timeout);
    }

    /** {@link #create(Vertx, String, int, boolean, Duration)} with the job's {@code secret}. */
    public static Future<TcpStore> create(Vertx vertx, String host, int port, boolean isServer, Duration timeout,
            JobSecret secret) {
        return isServer ? server(vertx, host, port, timeout, secret) : client(vertx, host, port, timeout, secret);
    }

    /** The port of the server: the bound one for a server (also when 0 was asked), the one connected to. */
    public int port() {
        return port;
    }

    /** The host the server was bound to, or the client connected to, as given. */
    public String host() {
        return host;
    }

    /** True for the instance that runs the server. */
    public boolean isServer() {
        return server != null;
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        return delegate.set(key, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        return delegate.get(key);
    }

    /**
     * {@inheritDoc} The future fails with {@link IllegalStateException} when the key holds something else than a
     * decimal counter.
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Long> add(String key, long delta) {
        return delegate.add(key, delta);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return delegate.compareSet(key, expected, desired);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys}, one of them or {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        return delegate.wait(keys, timeout);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        return delegate.deleteKey(key);
    }

    /** {@inheritDoc} */
    @Override
    public Future<Long> numKeys() {
        return delegate.numKeys();
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        return delegate.check(keys);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        return delegate.append(key, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        return delegate.multiGet(keys);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        return delegate.multiSet(entries);
    }

    /** {@inheritDoc} */
    @Override
    public Duration timeout() {
        return delegate.timeout();
    }

    /**
     * Closes without waiting: a client closes its connection, a server stops listening and closes every client's
     * connection (their calls fail). Pending calls of this instance fail with {@link IllegalStateException}.
     * Idempotent; use {@link #closeAsync()} to know when the port is free.
     */
    @Override
    public void close() {
        closeAsync();
    }

    /** {@link #close()}, with a future that completes once the socket or the server is closed. */
    public Future<Void> closeAsync() {
        if (client != null) {
            return client.closeAsync();
        }
        delegate.close();
        return server.close();
    }
}
