package io.tensorbus.distributed.pipeline;

import java.util.concurrent.TimeUnit;

/**
 * The order in which one stage runs its micro-batches: the order the driver numbered them, whatever order their
 * calls reach the stage's thread pool in. Without it, micro-batches that arrive together race for the stage and
 * state that each one updates (BatchNorm's running statistics) ends up depending on the race. A micro-batch whose
 * predecessor has not come within {@link #PATIENCE_MILLIS} goes ahead without it, so a lost call cannot stall the
 * stage.
 */
final class StageTurns {
    /** How long a micro-batch waits for a missing predecessor, in milliseconds. */
    static final long PATIENCE_MILLIS = 2000;

    private long next;

    /** Waits until micro-batch {@code ticket} is next (or its predecessors are late beyond patience). */
    synchronized void await(long ticket) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PATIENCE_MILLIS);
        while (ticket > next) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                next = ticket;
                return;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Micro-batch {@code ticket} is done with the stage: the next one may go. */
    synchronized void done(long ticket) {
        next = Math.max(next, ticket + 1);
        notifyAll();
    }
}
