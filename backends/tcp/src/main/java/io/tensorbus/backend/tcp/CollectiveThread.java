package io.tensorbus.backend.tcp;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;

/**
 * The thread a group runs its shared-memory collectives on, one at a time in the order given, as gloo's and NCCL's
 * work threads. After each task it polls for the next one for a while before it sleeps: the next collective of a
 * training step then starts without a wake-up (tens of microseconds on a loaded machine).
 */
final class CollectiveThread implements AutoCloseable {
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private final long pollNanos;
    private final Runnable onExit;
    private volatile boolean sleeping;
    private volatile boolean closed;

    /**
     * Starts the daemon thread {@code name}, which polls {@code pollNanos} after its last task before it sleeps and
     * runs {@code onExit} last, once closed and its queue is empty.
     */
    CollectiveThread(String name, long pollNanos, Runnable onExit) {
        this.pollNanos = pollNanos;
        this.onExit = onExit;
        this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::loop);
        thread.start();
    }

    /**
     * Queues {@code task}.
     *
     * @throws RejectedExecutionException once closed
     */
    void execute(Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("closed");
        }
        queue.add(task);
        if (closed && queue.remove(task)) {
            // Closed between the check and the add, and the thread may have left already.
            throw new RejectedExecutionException("closed");
        }
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    private void loop() {
        long idleSince = System.nanoTime();
        while (true) {
            Runnable task = queue.poll();
            if (task != null) {
                task.run();
                idleSince = System.nanoTime();
            } else if (closed) {
                onExit.run();
                return;
            } else if (System.nanoTime() - idleSince < pollNanos) {
                // Yields, not spins: on a machine with more threads than cores the caller may need this core.
                Thread.yield();
            } else {
                // Dekker's pattern with execute: either it sees the flag and wakes this thread, or this thread
                // sees its task.
                sleeping = true;
                if (queue.isEmpty() && !closed) {
                    LockSupport.park(this);
                }
                sleeping = false;
            }
        }
    }

    /** Runs what is queued, then {@code onExit}, then stops; later tasks are refused. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
