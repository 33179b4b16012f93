package io.tensorbus.tensor;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps dead tensor storage from piling up. Storage lives off-heap and goes back to the host cache only when
 * the garbage collector finds it unreachable, but the collector does not see off-heap memory, so a training
 * loop could allocate gigabytes of fresh native memory between two collections; every fresh page then costs a
 * fault and a kernel clear. Every allocation reports here, and after each step of handouts (256 MiB, system
 * property {@code tensorbus.gcStepBytes}) it decides whether to ask for a collection, whose cleaners give the
 * dead storage back to the cache:
 * <ul>
 *   <li>when no collection at all ran during that step (a loop that allocates tensors and little else on the
 *       heap), it asks when the step also exceeds the storage alive before it: the policy of JDK direct
 *       buffers and JavaCPP, with a bound that grows with the live set;</li>
 *   <li>when the JVM's own young collections ran, they already return the storage that died young (most of a
 *       training step's), and a full collection ({@code System.gc()}, 30 ms of pause on a training rank, every
 *       eighth step of the tutorial network, while the other ranks wait for it in the next all-reduce) is asked
 *       for only when the storage alive has grown by a whole step over its lowest level since the last one:
 *       storage that outlived a young collection and died later.</li>
 * </ul>
 * {@code -XX:+DisableExplicitGC} turns it off.
 */
final class NativeMemoryPacer {
    private static final long STEP = Long.getLong("tensorbus.gcStepBytes", 256L << 20);
    private static final AtomicLong SINCE_DECISION = new AtomicLong();
    private static final Object LOCK = new Object();
    private static final AtomicLong REQUESTED = new AtomicLong();
    private static final List<GarbageCollectorMXBean> COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans();
    /** The lowest live storage seen at a decision since the last requested collection; -1 for none yet. */
    private static long floor = -1;
    private static long collectionsAtDecision = collections();

    private NativeMemoryPacer() {
    }

    /** Counts an allocation of {@code bytes} and, after each step of handouts, decides whether to collect. */
    static void beforeAllocate(long bytes) {
        if (SINCE_DECISION.addAndGet(bytes) <= STEP) {
            return;
        }
        synchronized (LOCK) {
            long since = SINCE_DECISION.get();
            if (since <= STEP) {
                return;
            }
            long live = liveBytes();
            long count = collections();
            boolean collectorRan = count != collectionsAtDecision;
            boolean collect = collectorRan ? floor >= 0 && live > floor + STEP : since > live - since;
            if (collect) {
                REQUESTED.incrementAndGet();
                System.gc();
                floor = -1;
                collectionsAtDecision = collections();
            } else {
                floor = floor < 0 ? live : Math.min(floor, live);
                collectionsAtDecision = count;
            }
            SINCE_DECISION.set(0);
        }
    }

    /** Collections run so far by every collector of this JVM (young and full). */
    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean gc : COLLECTORS) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    /** Collections this pacer has asked for so far (for tests). */
    static long requested() {
        return REQUESTED.get();
    }

    /** Off-heap bytes held by storages not yet found unreachable or released (for diagnostics and tests). */
    static long liveBytes() {
        return CachingHostAllocator.get().allocatedBytes();
    }
}
