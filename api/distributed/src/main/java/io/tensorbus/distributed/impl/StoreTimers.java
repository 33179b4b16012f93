package io.tensorbus.distributed.impl;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread that fires store timeouts, shared by every store of the JVM so that stores need no
 * {@code Vertx} and cost no thread each. Timed-out futures complete on this thread: listeners must not block.
 */
public final class StoreTimers {

    private static final ScheduledThreadPoolExecutor TIMERS = createTimers();

    private StoreTimers() {
    }

    /** Runs {@code task} once after {@code delay} unless the returned future is cancelled first. */
    public static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        return TIMERS.schedule(task, StoreChecks.millis(delay), TimeUnit.MILLISECONDS);
    }

    private static ScheduledThreadPoolExecutor createTimers() {
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "tensorbus-store-timer");
            thread.setDaemon(true);
            return thread;
        });
        // Most timers are cancelled because the key arrives in time: drop them at once instead of keeping
        // up to 30 minutes' worth of dead entries in the queue.
        timers.setRemoveOnCancelPolicy(true);
        return timers;
    }
}
