package io.tensorbus.backend.nccl;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The thread that completes a group's NCCL work and makes sure none of it hangs, as PyTorch's NCCL watchdog with
 * its async error handling always on: it polls each operation's CUDA event (oldest first: a stream finishes in
 * order), completes the callers' futures, and every {@value #ASYNC_ERROR_CHECK_MILLIS} ms asks NCCL for an
 * asynchronous error. An operation older than the group's timeout, or an asynchronous error, makes it call
 * {@code onFailure} once, which aborts the communicator and fails everything pending.
 */
final class NcclWatchdog implements Runnable {
    /** How often NCCL is asked for an asynchronous error, in milliseconds. */
    static final long ASYNC_ERROR_CHECK_MILLIS = 100;
    /** How long the thread sleeps between polls while work is pending, in microseconds. */
    private static final long BUSY_POLL_MICROS = 20;

    private final Nccl nccl;
    private final long comm;
    private final CudaStream stream;
    private final Duration timeout;
    private final Consumer<Failure> onFailure;
    private final ArrayDeque<NcclWork> pending = new ArrayDeque<>();
    private final Thread thread;
    private volatile boolean stopped;

    /**
     * Why the group failed: the work that was oldest when it happened (or null), and NCCL's result code or -1 for
     * a timeout.
     */
    record Failure(NcclWork oldest, int result, String message) {
        boolean timedOut() {
            return result < 0;
        }
    }

    NcclWatchdog(String name, Nccl nccl, long comm, CudaStream stream, Duration timeout, Consumer<Failure> onFailure) {
        this.nccl = nccl;
        this.comm = comm;
        this.stream = stream;
        this.timeout = timeout;
        this.onFailure = onFailure;
        this.thread = Thread.ofPlatform().daemon().name("tensorbus-nccl-watchdog-" + name).unstarted(this);
    }

    void start() {
        thread.start();
    }

    /** Watches {@code work} from now on. */
    void watch(NcclWork work) {
        synchronized (pending) {
            pending.add(work);
        }
        LockSupport.unpark(thread);
    }

    /** Removes and returns everything pending, for the group to fail. */
    NcclWork[] drain() {
        synchronized (pending) {
            NcclWork[] all = pending.toArray(new NcclWork[0]);
            pending.clear();
            return all;
        }
    }

    /** Stops the thread (it finishes its current poll). */
    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        long nextErrorCheck = System.nanoTime();
        while (!stopped) {
            boolean busy;
            try {
                busy = completeFinished();
                long now = System.nanoTime();
                if (now - nextErrorCheck >= 0) {
                    nextErrorCheck = now + TimeUnit.MILLISECONDS.toNanos(ASYNC_ERROR_CHECK_MILLIS);
                    checkAsyncError();
                }
                checkTimeout(now);
            } catch (RuntimeException e) {
                fail(new Failure(oldest(), NcclConstants.INTERNAL_ERROR, "the watchdog could not poll the group: "
                        + e));
                return;
            }
            LockSupport.parkNanos(busy ? TimeUnit.MICROSECONDS.toNanos(BUSY_POLL_MICROS)
                    : TimeUnit.MILLISECONDS.toNanos(ASYNC_ERROR_CHECK_MILLIS));
        }
    }

    /** Completes the finished work at the head of the queue; true when work remains. */
    private boolean completeFinished() {
        while (true) {
            NcclWork head;
            synchronized (pending) {
                head = pending.peek();
            }
            if (head == null) {
                return false;
            }
            if (!stream.isDone(head.event())) {
                return true;
            }
            synchronized (pending) {
                pending.remove(head);
            }
            stream.releaseEvent(head.event());
            head.promise().tryComplete();
        }
    }

    private void checkAsyncError() {
        int error = nccl.commGetAsyncError(comm);
        if (error != NcclConstants.SUCCESS && error != NcclConstants.IN_PROGRESS) {
            fail(new Failure(oldest(), error, nccl.errorString(error) + describe(nccl.lastError(comm))));
        }
    }

    private static String describe(String lastError) {
        return lastError == null || lastError.isBlank() ? "" : " (" + lastError + ")";
    }

    private void checkTimeout(long now) {
        NcclWork head = oldest();
        if (head != null && now - head.startNanos() > timeout.toNanos()) {
            fail(new Failure(head, -1, head.description() + " did not finish within " + timeout));
        }
    }

    private NcclWork oldest() {
        synchronized (pending) {
            return pending.peek();
        }
    }

    private void fail(Failure f) {
        stopped = true;
        onFailure.accept(f);
    }
}
