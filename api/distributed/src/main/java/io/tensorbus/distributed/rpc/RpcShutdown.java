package io.tensorbus.distributed.rpc;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The graceful shutdown of PyTorch's {@code _wait_all_workers}, through the rendezvous store: a worker
 * whose own calls are all answered counts itself in; once every worker has, they all close. Until then
 * each keeps serving, so a call that nests further calls still finishes. A second count lets the worker
 * that hosts the store close it last.
 */
final class RpcShutdown {
    /** The key the last worker to leave sets; rank 0 of the next job on the store deletes it. */
    static final String LEFT_ALL = "shutdown/left/all";
    private static final Duration POLL = Duration.ofMillis(5);
    private static final Duration LAST_LEAVE = Duration.ofSeconds(10);

    private RpcShutdown() {
    }

    /**
     * The whole shutdown within {@link RpcOptions#initTimeout()}: waits until {@code busy} turns false (this
     * worker's calls and RRef messages are answered), then for every worker in {@code store}; runs
     * {@code reportLeaks} once all are ready, and leaves.
     */
    static Future<Void> graceful(LocalWorker worker, Store store, BooleanSupplier busy, Runnable reportLeaks) {
        int world = worker.table().workers().size();
        long deadline = System.nanoTime() + worker.options().initTimeout().toNanos();
        return idle(worker, busy, deadline)
                .compose(v -> countIn(store, "shutdown/ready", world, List.of()))
                .compose(v -> store.wait(List.of("shutdown/ready/all"), left(deadline)))
                .andThen(r -> {
                    if (r.succeeded()) {
                        reportLeaks.run();
                    }
                })
                .compose(v -> countIn(store, "shutdown/left", world, workerKeys(world)))
                .compose(v -> store.wait(List.of(LEFT_ALL), min(LAST_LEAVE, left(deadline)))
                        .recover(e -> Future.succeededFuture()))
                .recover(e -> Future.failedFuture(new RpcException("the graceful shutdown of " + worker.self()
                        + " did not complete within " + worker.options().initTimeout() + ": " + e.getMessage(), e)));
    }

    /**
     * Adds this worker to {@code counter}; the last one in deletes {@code cleanup} and the counter (so that a
     * later job can use the store) and sets {@code counter/all}.
     */
    private static Future<Void> countIn(Store store, String counter, int world, List<String> cleanup) {
        return store.add(counter, 1).compose(n -> {
            if (n < world) {
                return Future.succeededFuture();
            }
            List<String> keys = new ArrayList<>(cleanup);
            keys.add(counter);
            return Future.all(keys.stream().map(store::deleteKey).toList())
                    .compose(v -> store.set(counter + "/all", new byte[] {1}));
        });
    }

    private static List<String> workerKeys(int world) {
        List<String> keys = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            keys.add("worker/" + r);
        }
        keys.add("shutdown/ready/all");
        return keys;
    }

    private static Duration left(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** Completes when {@code busy} turns false, or fails at {@code deadlineNanos}. */
    private static Future<Void> idle(LocalWorker worker, BooleanSupplier busy, long deadlineNanos) {
        Promise<Void> done = Promise.promise();
        poll(worker, busy, deadlineNanos, done);
        return done.future();
    }

    private static void poll(LocalWorker worker, BooleanSupplier busy, long deadlineNanos, Promise<Void> done) {
        if (!busy.getAsBoolean()) {
            done.tryComplete();
        } else if (System.nanoTime() > deadlineNanos) {
            done.tryFail(new RpcException("the calls of " + worker.self() + " were still pending at the shutdown"
                    + " deadline"));
        } else {
            worker.vertx().setTimer(POLL.toMillis(), t -> poll(worker, busy, deadlineNanos, done));
        }
    }
}
