package io.tensorbus.distributed.rpc;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The graceful shutdown of PyTorch's {@code _wait_all_workers}, through the rendezvous store: a worker
 * whose own calls are all answered counts itself in; once every worker has, they all close. Until then
 * each keeps serving, so a call that nests further calls still finishes. A second count lets the worker
 * that hosts the store close it last.
 *
 * <p>A worker known gone (a connection to it closed while up, or it left the cluster) never counts itself in:
 * the worker that knows writes why under {@value #LOST}, and every worker waiting for the others reads that key
 * every {@link #LOST_POLL}, so all of them fail within moments naming it instead of waiting out the timeout.
 */
final class RpcShutdown {
    /** The key the last worker to leave sets; rank 0 of the next job on the store deletes it. */
    static final String LEFT_ALL = "shutdown/left/all";
    /** The key that says which worker is gone, so the others need not wait for it; rank 0 of a new job deletes it. */
    static final String LOST = "shutdown/lost";
    private static final String READY_ALL = "shutdown/ready/all";
    private static final Duration POLL = Duration.ofMillis(5);
    private static final Duration LOST_POLL = Duration.ofMillis(200);
    private static final Duration LAST_LEAVE = Duration.ofSeconds(10);

    private RpcShutdown() {
    }

    /**
     * The whole shutdown within {@code timeout}: waits until {@code busy} turns false (this worker's calls and RRef
     * messages are answered), then for every worker in {@code store}; runs {@code reportLeaks} once all are ready,
     * and leaves. Fails at once when a worker is known gone ({@code gone}, or the {@value #LOST} key), naming it.
     */
    static Future<Void> graceful(LocalWorker worker, Store store, Duration timeout, BooleanSupplier busy,
                                 Supplier<Map<Integer, String>> gone, Runnable reportLeaks) {
        int world = worker.table().workers().size();
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        Promise<Void> ready = Promise.promise();
        long watch = watchLost(worker, store, gone, ready);
        // Calls or RRef messages to a worker that is gone may never be answered: the watch ends this wait too.
        idle(worker, () -> busy.getAsBoolean() && !ready.future().isComplete(), deadline)
                // Not once the watch failed it: the others would count this worker as ready.
                .compose(v -> ready.future().isComplete() ? ready.future()
                        : countIn(store, "shutdown/ready", world, List.of()))
                .compose(v -> store.wait(List.of(READY_ALL), left(deadline)))
                .onComplete(r -> {
                    if (r.succeeded()) {
                        ready.tryComplete();
                    } else {
                        ready.tryFail(r.cause());
                    }
                });
        return ready.future().andThen(r -> worker.vertx().cancelTimer(watch))
                .andThen(r -> {
                    if (r.succeeded()) {
                        reportLeaks.run();
                    }
                })
                .compose(v -> countIn(store, "shutdown/left", world, workerKeys(world)))
                .compose(v -> store.wait(List.of(LEFT_ALL), min(LAST_LEAVE, left(deadline)))
                        .recover(e -> Future.succeededFuture()))
                .recover(e -> Future.failedFuture(new RpcException(String.format("the graceful shutdown of %s "
                        + "failed after %.1f s (its timeout: %s s): %s", worker.self(),
                        (System.nanoTime() - start) / 1e9, BigDecimal.valueOf(timeout.toMillis(), 3)
                                .stripTrailingZeros().toPlainString(), e.getMessage()), e)));
    }

    /**
     * Fails {@code done} as soon as a worker is known gone here (which it then writes under {@value #LOST}) or
     * anywhere (read from there), every {@link #LOST_POLL}; returns the timer, for the caller to cancel.
     */
    private static long watchLost(LocalWorker worker, Store store, Supplier<Map<Integer, String>> gone,
                                  Promise<Void> done) {
        AtomicBoolean reading = new AtomicBoolean();
        return worker.vertx().setPeriodic(1, LOST_POLL.toMillis(), t -> {
            Map<Integer, String> known = gone.get();
            if (!known.isEmpty()) {
                String why = String.join("; ", known.values()) + " (learnt by " + worker.self() + ")";
                // The first to know tells the others, and everyone names what the first wrote: a worker that
                // closed because it learnt of a loss is a consequence, not the cause. Done fails either way.
                store.compareSet(LOST, new byte[0], why.getBytes(StandardCharsets.UTF_8))
                        .onComplete(r -> done.tryFail(new RpcException(r.succeeded() && r.result() != null
                                && r.result().length > 0 ? new String(r.result(), StandardCharsets.UTF_8) : why)));
            } else if (reading.compareAndSet(false, true)) {
                store.check(List.of(LOST)).compose(set -> set ? store.get(LOST) : Future.succeededFuture(null))
                        .onComplete(r -> {
                            reading.set(false);
                            if (r.succeeded() && r.result() != null) {
                                done.tryFail(new RpcException(new String(r.result(), StandardCharsets.UTF_8)));
                            }
                        });
            }
        });
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
