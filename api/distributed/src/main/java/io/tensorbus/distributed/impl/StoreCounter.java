package io.tensorbus.distributed.impl;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * Waiting for a counter in a store to reach a target, as PyTorch waits for its workers ({@code init/}) and for its
 * store-based barrier: read the counter again (an add of 0) every {@value #POLL_MS} ms until it does, or fail once
 * the deadline has passed.
 */
public final class StoreCounter {
    /** How often the counter is read again, in milliseconds, as PyTorch's loops sleep. */
    static final long POLL_MS = 10;

    private StoreCounter() {
    }

    /**
     * Completes once the counter is at least {@code target}, starting from the value {@code seen} already read.
     *
     * @param read reads the counter again
     * @param deadline a {@link System#nanoTime()} after which the wait fails
     * @param late the failure's message from the last value seen
     */
    public static Future<Void> awaitAtLeast(Vertx vertx, Supplier<Future<Long>> read, long seen, long target,
                                            long deadline, LongFunction<String> late) {
        if (seen >= target) {
            return Future.succeededFuture();
        }
        if (System.nanoTime() > deadline) {
            return Future.failedFuture(new TimeoutException(late.apply(seen)));
        }
        Promise<Long> next = Promise.promise();
        vertx.setTimer(POLL_MS, id -> read.get().onComplete(next));
        return next.future().compose(n -> awaitAtLeast(vertx, read, n, target, deadline, late));
    }
}
