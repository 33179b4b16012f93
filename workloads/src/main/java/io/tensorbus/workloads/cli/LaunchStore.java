package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.TcpStore;
import io.tensorbus.internal.distributed.AdvertisedHost;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The rendezvous store of a launched job, as torchrun's agent store: for one node the launcher binds a free port
 * before any child starts, so no two children race for a port; for several nodes node 0's launcher binds the
 * master port and the other launchers connect to it. Every child (rank 0 included) connects as a client, and the
 * launchers of several nodes meet there too ({@link LauncherGroup}). Owns its own Vert.x instance.
 */
final class LaunchStore implements AutoCloseable {
    private static final long START_SECONDS = 30;
    private static final long CLOSE_SECONDS = 10;

    private final Vertx vertx;
    private final TcpStore store;

    private LaunchStore(Vertx vertx, TcpStore store) {
        this.vertx = vertx;
        this.store = store;
    }

    /**
     * Starts a store server on a free port of {@code host}.
     *
     * @param timeout how long the store's waiting operations may wait
     * @param secret the job's secret every rank proves
     * @throws Exception when the server cannot bind or start within 30 seconds
     */
    static LaunchStore start(String host, Duration timeout, JobSecret secret) throws Exception {
        return start(host, 0, timeout, secret);
    }

    /**
     * Starts a store server on {@code host:port} ({@code port} 0: a free one).
     *
     * @throws Exception when the server cannot bind or start within 30 seconds
     */
    static LaunchStore start(String host, int port, Duration timeout, JobSecret secret) throws Exception {
        Vertx vertx = Distributed.newVertx();
        try {
            return new LaunchStore(vertx, await(TcpStore.server(vertx, host, port, timeout, secret), START_SECONDS));
        } catch (Exception | Error e) {
            closeQuietly(vertx);
            throw e;
        }
    }

    /**
     * Starts a store server on {@code port} for peers that reach this host at {@code address}: bound to the
     * address when it is a loopback one, else to every interface (the address may be a name, or a NAT's).
     *
     * @throws Exception when the server cannot bind or start within 30 seconds
     */
    static LaunchStore startAt(String address, int port, Duration timeout, JobSecret secret) throws Exception {
        return start(AdvertisedHost.isLoopback(address) ? address : "0.0.0.0", port, timeout, secret);
    }

    /**
     * Connects to the store node 0's launcher hosts, trying until {@code setupTimeout}.
     *
     * @param timeout how long the store's waiting operations may wait once connected
     * @throws Exception when no store answered in time, or it does not share the secret
     */
    static LaunchStore connect(String host, int port, Duration setupTimeout, Duration timeout, JobSecret secret)
            throws Exception {
        Vertx vertx = Distributed.newVertx();
        try {
            TcpStore store = await(TcpStore.client(vertx, host, port, setupTimeout, secret),
                    setupTimeout.toSeconds() + 5);
            store.setTimeout(timeout);
            return new LaunchStore(vertx, store);
        } catch (Exception | Error e) {
            closeQuietly(vertx);
            throw e;
        }
    }

    /** The store itself: the server's in-process view, or the client. */
    TcpStore store() {
        return store;
    }

    /** The bound port. */
    int port() {
        return store.port();
    }

    /** Stops the server and its Vert.x instance (waits up to 10 seconds for each). */
    @Override
    public void close() {
        try {
            awaitQuietly(store.closeAsync());
        } finally {
            closeQuietly(vertx);
        }
    }

    private static void closeQuietly(Vertx vertx) {
        awaitQuietly(vertx.close());
    }

    private static void awaitQuietly(Future<?> closing) {
        try {
            await(closing, CLOSE_SECONDS);
        } catch (Exception e) {
            // Closing at exit: a slow or failed close changes nothing for the job's result.
        }
    }

    private static <T> T await(Future<T> f, long seconds) throws Exception {
        try {
            return f.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception c ? c : e;
        } catch (TimeoutException e) {
            throw new TimeoutException("no answer within " + seconds + " s");
        }
    }
}
