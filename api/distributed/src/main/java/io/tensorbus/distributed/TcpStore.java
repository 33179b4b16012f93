package io.tensorbus.distributed;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreState;
import io.tensorbus.distributed.impl.TcpStoreClient;
import io.tensorbus.distributed.impl.TcpStoreServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
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
 * <p>The wire protocol (version 1: length-prefixed frames, a PING with magic and version first, twelve commands)
 * is documented with its implementation, {@code io.tensorbus.distributed.impl.TcpStoreProtocol}. A frame that
 * breaks it makes the server close that connection, logging why, while the other connections go on. No Java
 * serialization is involved.
 *
 * <h2>The job's secret</h2>
 * Before its first request, every connection proves the job's secret ({@code SecretHandshake}, channel
 * {@code "store"}), so a process that does not know it can neither read nor write a key. The factories without
 * a {@code secret} argument take the process's: {@code TENSORBUS_SECRET}, else the file
 * {@code TENSORBUS_SECRET_FILE} names ({@code tensorbus launch} sets the first for its ranks). Without a secret
 * the store proves nothing, and its server may listen on loopback addresses only.
 */
public interface TcpStore extends Store {


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
    static Future<TcpStore> server(Vertx vertx, String host, int port, Duration timeout, JobSecret secret) {
        Objects.requireNonNull(secret, "secret must not be null (JobSecret.none() for none)");
        Objects.requireNonNull(vertx, "vertx must not be null");
        StoreChecks.host(host);
        StoreChecks.port(port, true);
        StoreChecks.timeout(timeout);
        StoreState state = new StoreState();
        return TcpStoreServer.listen(vertx, host, port, state, secret)
                .map(server -> new TcpStoreHost(host, server, state, timeout));
    }

    /**
     * {@link #server(Vertx, String, int, Duration, JobSecret)} with the process's secret (see the class comment).
     *
     * @throws IllegalArgumentException also when the process's secret is unusable (too short, an unreadable
     *                                  or unprotected file)
     */
    static Future<TcpStore> server(Vertx vertx, String host, int port, Duration timeout) {
        return server(vertx, host, port, timeout, JobSecret.fromEnvironment(Distributed.environment()));
    }

    /** {@link #server(Vertx, String, int, Duration)} with the {@link Distributed#DEFAULT_TIMEOUT}. */
    static Future<TcpStore> server(Vertx vertx, String host, int port) {
        return server(vertx, host, port, Distributed.DEFAULT_TIMEOUT);
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
    static Future<TcpStore> client(Vertx vertx, String host, int port, Duration timeout, JobSecret secret) {
        Objects.requireNonNull(secret, "secret must not be null (JobSecret.none() for none)");
        Objects.requireNonNull(vertx, "vertx must not be null");
        StoreChecks.host(host);
        StoreChecks.port(port, false);
        StoreChecks.timeout(timeout);
        return TcpStoreClient.connect(vertx, host, port, timeout, secret).map(client -> client);
    }

    /**
     * {@link #client(Vertx, String, int, Duration, JobSecret)} with the process's secret (see the class comment).
     *
     * @throws IllegalArgumentException also when the process's secret is unusable
     */
    static Future<TcpStore> client(Vertx vertx, String host, int port, Duration timeout) {
        return client(vertx, host, port, timeout, JobSecret.fromEnvironment(Distributed.environment()));
    }

    /** {@link #client(Vertx, String, int, Duration)} with the {@link Distributed#DEFAULT_TIMEOUT}. */
    static Future<TcpStore> client(Vertx vertx, String host, int port) {
        return client(vertx, host, port, Distributed.DEFAULT_TIMEOUT);
    }

    /**
     * PyTorch's {@code TCPStore(host, port, is_master=...)}: {@link #server} when {@code isServer}, else
     * {@link #client}.
     */
    static Future<TcpStore> create(Vertx vertx, String host, int port, boolean isServer, Duration timeout) {
        return isServer ? server(vertx, host, port, timeout) : client(vertx, host, port, timeout);
    }

    /** {@link #create(Vertx, String, int, boolean, Duration)} with the job's {@code secret}. */
    static Future<TcpStore> create(Vertx vertx, String host, int port, boolean isServer, Duration timeout,
            JobSecret secret) {
        return isServer ? server(vertx, host, port, timeout, secret) : client(vertx, host, port, timeout, secret);
    }

    /** The port of the server: the bound one for a server (also when 0 was asked), the one connected to. */
    int port();

    /** The host the server was bound to, or the client connected to, as given. */
    String host();

    /** True for the instance that runs the server. */
    boolean isServer();

    /**
     * Closes without waiting: a client closes its connection, a server stops listening and closes every client's
     * connection (their calls fail). Pending calls of this instance fail with {@link IllegalStateException}.
     * Idempotent; use {@link #closeAsync()} to know when the port is free.
     */
    @Override
    void close();

    /** {@link #close()}, with a future that completes once the socket or the server is closed. */
    Future<Void> closeAsync();
}
