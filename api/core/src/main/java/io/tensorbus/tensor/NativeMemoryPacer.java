package io.tensorbus.tensor;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps dead tensor storage from piling up. Storage lives off-heap and goes back to the host cache only when
 * the garbage collector finds it unreachable, but the collector does not see off-heap memory, so a training
 * loop could allocate gigabytes of fresh native memory between two collections; every fresh page then costs a
 * fault and a kernel clear. Every allocation reports here, and each time the storage allocated since the last
 * collection exceeds both a step (256 MiB, system property {@code tensorbus.gcStepBytes}) and the storage alive
 * before it, this asks for a collection, whose cleaners give the dead storage back to the cache: the policy of
 * JDK direct buffers and JavaCPP, with a bound that grows with the live set. {@code -XX:+DisableExplicitGC}
 * turns it off.
 */
final class NativeMemoryPacer {
    private static final long STEP = Long.getLong("tensorbus.gcStepBytes", 256L << 20);
    private static final AtomicLong SINCE_COLLECTION = new AtomicLong();
    private static final Object LOCK = new Object();

    private NativeMemoryPacer() {
    }

    /** Counts an allocation of {@code bytes} and collects first when the bound is passed. */
    static void beforeAllocate(long bytes) {
        long since = SINCE_COLLECTION.addAndGet(bytes);
        // The bound is at least the step: below it, the live bytes need not be asked for.
        if (since <= STEP || since <= bound(since)) {
            return;
        }
        synchronized (LOCK) {
            since = SINCE_COLLECTION.get();
            if (since > bound(since)) {
                SINCE_COLLECTION.set(0);
                System.gc();
            }
        }
    }

    /**
     * The step, or the storage that is really alive if larger: tracked storage not yet freed, less what was
     * allocated since the last collection (which is where the garbage comes from).
     */
    private static long bound(long since) {
        return Math.max(STEP, liveBytes() - since);
    }

    /** Off-heap bytes held by storages not yet found unreachable or released (for diagnostics and tests). */
    static long liveBytes() {
        return CachingHostAllocator.get().allocatedBytes();
    }
}
