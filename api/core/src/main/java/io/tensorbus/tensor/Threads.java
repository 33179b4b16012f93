package io.tensorbus.tensor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RejectedExecutionException;

/**
 * The compute pool that CPU kernels run on, sized to the cores by default; {@link #set(int)} is PyTorch's
 * {@code torch.set_num_threads}. Kernels split their work with {@link #parallelFor}; the calling thread
 * takes a share, so one thread means no hand-off at all.
 */
public final class Threads {
    private static volatile int count = Runtime.getRuntime().availableProcessors();
    private static volatile ForkJoinPool pool = newPool(count);

    private Threads() {
    }

    /** A loop body over the index range {@code [start, end)}. */
    @FunctionalInterface
    public interface RangeBody {
        /** Processes indices {@code start} (inclusive) to {@code end} (exclusive). */
        void run(int start, int end);
    }

    /** Element operations below which handing work to another thread costs more than it saves. */
    public static final int MIN_PARALLEL_WORK = 1 << 15;

    /**
     * The grain for {@link #parallelFor} over items that cost {@code workPerItem} element operations each:
     * enough items per part to be worth a thread.
     */
    public static int grain(long workPerItem) {
        return (int) Math.max(1, MIN_PARALLEL_WORK / Math.max(1, workPerItem));
    }

    /** How many threads kernels use. */
    public static int get() {
        return count;
    }

    /**
     * Sets how many threads kernels use (the calling thread included).
     *
     * @throws IllegalArgumentException when {@code n} is not in {@code [1, 1024]}
     */
    public static synchronized void set(int n) {
        if (n < 1 || n > 1024) {
            throw new IllegalArgumentException("thread count must be in [1, 1024], got " + n);
        }
        // The pool only grows: idle workers cost nothing, while replacing the pool made the new workers
        // run at half speed next to the old ones (measured: conv fwd+bwd 2x slower after 2 -> 1 -> 2).
        if (n - 1 > pool.getParallelism()) {
            ForkJoinPool old = pool;
            pool = newPool(n);
            old.shutdown();
        }
        count = n;
    }

    /**
     * Runs {@code body} over {@code [start, end)} split into at most {@link #get()} parts of at least
     * {@code grain} indices each, and returns when all parts are done. Nested calls from a pool thread run
     * inline, so kernels may call kernels.
     */
    public static void parallelFor(int start, int end, int grain, RangeBody body) {
        int n = end - start;
        if (n <= 0) {
            return;
        }
        int parts = (int) Math.min(count, Math.max(1, n / (long) Math.max(grain, 1)));
        ForkJoinPool p = pool;
        if (parts <= 1 || (Thread.currentThread() instanceof ForkJoinWorkerThread w && w.getPool() == p)) {
            body.run(start, end);
            return;
        }
        List<ForkJoinTask<?>> tasks = new ArrayList<>(parts - 1);
        for (int i = 1; i < parts; i++) {
            int s = start + (int) ((long) n * i / parts);
            int e = start + (int) ((long) n * (i + 1) / parts);
            try {
                tasks.add(p.submit(() -> body.run(s, e)));
            } catch (RejectedExecutionException rejected) {
                // set() replaced the pool meanwhile: do this part here.
                body.run(s, e);
            }
        }
        body.run(start, start + n / parts);
        for (ForkJoinTask<?> t : tasks) {
            t.join();
        }
    }

    private static ForkJoinPool newPool(int n) {
        // n - 1 workers: the caller runs one share itself.
        return new ForkJoinPool(Math.max(1, n - 1), p -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
            t.setName("tensorbus-compute-" + t.getPoolIndex());
            t.setDaemon(true);
            return t;
        }, null, false);
    }
}
