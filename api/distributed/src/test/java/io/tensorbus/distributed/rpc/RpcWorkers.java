package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * The workers of one RPC job in one JVM, for tests (here and in the packages built on RPC): one Vert.x, an in-memory
 * store, agents named worker0.., and bounded waits on their RRef counters ({@link RpcAgent#debugInfo()}).
 */
public final class RpcWorkers implements AutoCloseable {
    private final Vertx vertx = Distributed.newVertx();
    private final HashStore store = new HashStore(Duration.ofSeconds(30));
    private final List<RpcAgent> agents = new ArrayList<>();

    /** Starts {@code n} workers whose options {@code options(rank)} gives (the store and Vert.x are added). */
    public RpcWorkers start(int n, IntFunction<RpcOptions.Builder> options) throws Exception {
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            started.add(Rpc.init("worker" + r, r, n, options.apply(r).store(store).vertx(vertx).build()));
        }
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
        return this;
    }

    public Vertx vertx() {
        return vertx;
    }

    public HashStore store() {
        return store;
    }

    public RpcAgent get(int rank) {
        return agents.get(rank);
    }

    public List<RpcAgent> all() {
        return agents;
    }

    public long info(int rank, String key) {
        return get(rank).debugInfo().get(key);
    }

    /** Waits up to 15 s for {@code condition}. */
    public static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 15 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Until no worker has an RRef control message unacknowledged. */
    void controlMessagesSettle() throws InterruptedException {
        for (int r = 0; r < agents.size(); r++) {
            int rank = r;
            eventually(() -> info(rank, "num_pending_rref_messages") == 0, "worker" + r + " acknowledged: "
                    + get(rank).debugInfo());
        }
    }

    /**
     * Until no worker owns a value, holds a user reference or waits for an acknowledgement; with
     * {@code collect}, references dropped without close are collected meanwhile.
     */
    void ownerTablesEmptyEventually(boolean collect) throws InterruptedException {
        for (int r = 0; r < agents.size(); r++) {
            int rank = r;
            eventually(() -> (!collect || gc()) && info(rank, "num_owner_rrefs") == 0
                    && info(rank, "num_user_rrefs") == 0 && info(rank, "num_pending_rref_messages") == 0,
                    "worker" + r + " released everything: " + get(rank).debugInfo() + " " + get(rank).rrefs().leaks());
        }
    }

    private static boolean gc() {
        System.gc();
        return true;
    }

    @Override
    public void close() throws Exception {
        for (RpcAgent a : agents) {
            a.shutdown(false);
        }
        vertx.close().await(10, TimeUnit.SECONDS);
    }
}
