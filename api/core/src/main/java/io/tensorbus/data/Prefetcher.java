package io.tensorbus.data;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Loads the batches of one epoch, in order, on a virtual thread into a bounded queue. It holds no reference to
 * its {@link BatchIterator}, so that an abandoned iterator can be collected and its cleaner can stop this.
 *
 * <p>Every wait is bounded: the loader thread waits at most the timeout for room in the queue, then gives up
 * (the consumer is gone or too slow); the consumer waits at most the timeout for each batch, and notices at
 * once when the loader thread has ended.
 */
final class Prefetcher implements Runnable {
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** One loaded batch, or the failure of loading it. */
    private record Item(int index, Batch batch, Throwable error) {
    }

    private final int epoch;
    private final List<int[]> batches;
    private final Function<int[], Batch> fetch;
    private final Duration timeout;
    private final BlockingQueue<Item> queue;
    private final Thread thread;
    private volatile boolean stopped;
    private volatile String gaveUp;

    Prefetcher(int epoch, List<int[]> batches, Function<int[], Batch> fetch, int depth, Duration timeout) {
        this.epoch = epoch;
        this.batches = batches;
        this.fetch = fetch;
        this.timeout = timeout;
        this.queue = new ArrayBlockingQueue<>(depth);
        this.thread = Thread.ofVirtual().name("tensorbus-data-loader-" + IDS.incrementAndGet() + "-epoch-" + epoch)
                .unstarted(this);
    }

    void start() {
        thread.start();
    }

    Thread thread() {
        return thread;
    }

    /** Stops the loader thread and drops the batches it queued; idempotent, callable from any thread. */
    void stop() {
        stopped = true;
        thread.interrupt();
        queue.clear();
    }

    @Override
    public void run() {
        try {
            for (int k = 0; k < batches.size() && !stopped; k++) {
                Item item = load(k);
                if (stopped) {
                    return;
                }
                if (!queue.offer(item, timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                    gaveUp = "the loader thread gave up after waiting " + timeout + " for room to queue batch " + k
                            + " (the consumer took no batch meanwhile: the iterator was abandoned, or a step took"
                            + " longer than the timeout)";
                    return;
                }
                if (item.error() != null) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            // stop(): the iterator was closed or collected.
        }
    }

    private Item load(int k) {
        try {
            return new Item(k, fetch.apply(batches.get(k)), null);
        } catch (Throwable t) {
            return new Item(k, null, t);
        }
    }

    /**
     * The batch at position {@code k}, waiting at most the timeout for it.
     *
     * @throws DataLoaderException when loading it failed, the wait timed out or was interrupted, or the loader
     *     thread ended without it
     */
    Batch take(int k) {
        Item item = poll(k);
        if (item.index() != k) {
            throw failure(k, "the loader thread delivered batch " + item.index() + " out of order", null);
        }
        if (item.error() != null) {
            throw failure(k, "loading indices " + describe(batches.get(k)) + " failed in the loader thread "
                    + thread.getName() + ": " + item.error(), item.error());
        }
        return item.batch();
    }

    private Item poll(int k) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                Item item = queue.poll(Math.max(0, Math.min(SLICE_NANOS, left)), TimeUnit.NANOSECONDS);
                if (item != null) {
                    return item;
                }
                if (!thread.isAlive() && (item = queue.poll()) == null) {
                    throw failure(k, "the loader thread " + thread.getName() + " ended before loading it"
                            + (gaveUp != null ? ": " + gaveUp : stopped ? ": the iterator was closed" : ""), null);
                }
                if (item != null) {
                    return item;
                }
                if (left <= 0) {
                    throw failure(k, "timed out after " + timeout + " waiting for the loader thread "
                            + thread.getName() + " to load indices " + describe(batches.get(k)), null);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(k, "interrupted while waiting for the loader thread " + thread.getName(), e);
        }
    }

    private DataLoaderException failure(int k, String message, Throwable cause) {
        return new DataLoaderException(epoch, k, message, cause);
    }

    /** The indices of a batch for a message, shortened past 8. */
    static String describe(int[] indices) {
        if (indices.length <= 8) {
            return Arrays.toString(indices);
        }
        String head = Arrays.toString(Arrays.copyOf(indices, 8));
        return head.substring(0, head.length() - 1) + ", ... (" + indices.length + " indices)]";
    }
}
