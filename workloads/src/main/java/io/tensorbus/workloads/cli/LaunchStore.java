package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.TcpStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The rendezvous store that {@code tensorbus launch} hosts for a one-node job, as torchrun's agent store:
 * the launcher binds a free port before any child starts, so no two children race for a port, and every
 * child (rank 0 included) connects as a client. Owns its own Vert.x instance.
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
        Vertx vertx = Distributed.newVertx();
        try {
            return new LaunchStore(vertx, await(TcpStore.server(vertx, host, 0, timeout, secret), START_SECONDS));
        } catch (Exception | Error e) {
            closeQuietly(vertx);
            throw e;
        }
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
