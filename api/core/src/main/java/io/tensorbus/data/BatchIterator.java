package io.tensorbus.data;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * One epoch of a {@link DataLoader}. With prefetching, a virtual thread loads the next batches ahead of the
 * consumer into a bounded queue; {@link #close()}, reaching the end, a failure, or the iterator becoming
 * unreachable (an abandoned for-each) stops that thread. Use try-with-resources to stop it at once when
 * leaving a loop early. Not for use by several threads at a time.
 */
public final class BatchIterator implements Iterator<Batch>, AutoCloseable {
    private static final Cleaner CLEANER =
            Cleaner.create(Thread.ofPlatform().daemon(true).name("tensorbus-data-cleaner").factory());

    private final int epoch;
    private final List<int[]> batches;
    private final Function<int[], Batch> fetch;
    private final Prefetcher prefetcher;
    private final Cleaner.Cleanable cleanable;
    private int next;
    private boolean closed;

    BatchIterator(int epoch, List<int[]> batches, Function<int[], Batch> fetch, int prefetch, Duration timeout) {
        this.epoch = epoch;
        this.batches = batches;
        this.fetch = fetch;
        if (prefetch > 0 && !batches.isEmpty()) {
            Prefetcher p = new Prefetcher(epoch, batches, fetch, prefetch, timeout);
            this.prefetcher = p;
            this.cleanable = CLEANER.register(this, p::stop);
            p.start();
        } else {
            this.prefetcher = null;
            this.cleanable = null;
        }
    }

    /** The epoch this iterator yields. */
    public int epoch() {
        return epoch;
    }

    /** The number of batches in this epoch. */
    public int size() {
        return batches.size();
    }

    /** How many batches have been taken so far. */
    public int position() {
        return next;
    }

    @Override
    public boolean hasNext() {
        return !closed && next < batches.size();
    }

    /**
     * The next batch, waiting at most the loader's timeout for it.
     *
     * @throws NoSuchElementException when every batch was taken or the iterator is closed
     * @throws DataLoaderException when loading the batch failed (the cause is the dataset's or collate's
     *     exception) or the wait for it timed out; the iterator is closed afterwards
     */
    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + ": " + (closed ? "the iterator is closed"
                    : "all " + batches.size() + " batches were taken"));
        }
        int k = next++;
        try {
            Batch b = prefetcher == null ? loadHere(k) : prefetcher.take(k);
            if (next == batches.size()) {
                close();
            }
            return b;
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private Batch loadHere(int k) {
        try {
            return fetch.apply(batches.get(k));
        } catch (RuntimeException | Error e) {
            throw new DataLoaderException(epoch, k, "loading indices " + Prefetcher.describe(batches.get(k))
                    + " failed: " + e, e);
        }
    }

    /** Stops the loader thread and drops the batches it queued; idempotent. */
    @Override
    public void close() {
        closed = true;
        if (cleanable != null) {
            cleanable.clean();
        }
    }

    /** The loader thread, or null without prefetching (for tests). */
    Thread loaderThread() {
        return prefetcher == null ? null : prefetcher.thread();
    }
}
