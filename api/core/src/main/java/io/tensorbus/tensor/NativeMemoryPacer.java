package io.tensorbus.tensor;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
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
 *       heap), it asks when the handouts since the last collection exceed the storage alive before them: the
 *       policy of JDK direct buffers and JavaCPP, with a bound that grows with the live set. The handouts add up
 *       over steps, so dead storage left by earlier work, which counts as alive until a collection finds it, only
 *       defers the collection by its own size;</li>
 *   <li>when the JVM's own young collections ran, they already return the storage that died young (most of a
 *       training step's), and a full collection ({@code System.gc()}, 30 ms of pause on a training rank, every
 *       eighth step of the tutorial network, while the other ranks wait for it in the next all-reduce) is asked
 *       for only when the storage alive has grown by a whole step over its lowest level since the last one:
 *       storage that outlived a young collection and died later.</li>
 * </ul>
 * {@code -XX:+DisableExplicitGC} turns it off.
 *
 * <p>Between those steps, under the serial collector with a small young generation (the launcher's ranks on a
 * machine with no more cores than ranks run with an 8 MiB one), a loop that allocates tensors and little else on
 * the heap would still hold hundreds of iterations of dead tensors between two young collections, and the C
 * library keeps the pages of the highest such point: resident memory creeps up with the rarest peaks. PyTorch frees a
 * tensor the moment its last reference dies. So when the storage alive has grown by {@code tensorbus.youngGcStepBytes}
 * (16 MiB; 0 turns it off) since the last collection, the pacer fills what is left of a small eden with short-lived
 * arrays: a young collection (a millisecond or two) finds the tensors that died since, and their storage goes back to
 * the cache.
 *
 * <p>Storage a {@link MemoryScope} owns goes back when the scope closes, not when a collection finds it, so neither
 * rule counts it: handouts while a scope is open on the allocating thread are not counted, and the storage alive the
 * rules judge leaves out what scopes own. A training step in a scope (however much it allocates, and however many
 * ranks share the JVM) therefore costs no nudged or asked-for collection; loops that {@code Storage.release} their
 * tensors keep the storage alive flat and never trigger them either.
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
    /** Handouts since the last collection seen at a decision, in bytes. */
    private static long sinceCollection;

    /** Growth of the storage alive since the last collection that nudges a young one, in bytes; 0: never. */
    private static final long YOUNG_STEP = Long.getLong("tensorbus.youngGcStepBytes", 16L << 20);
    /** A young generation larger than this is not filled: that would cost more than the storage it finds. */
    private static final long EDEN_MAX_BYTES = 32L << 20;
    /** Handouts between two looks at the storage alive, in bytes. */
    private static final long LOOK_BYTES = 1L << 20;
    private static final int FILL_CHUNK = 256 << 10;
    private static final AtomicLong SINCE_LOOK = new AtomicLong();
    private static final AtomicLong NUDGED = new AtomicLong();
    private static final MemoryPoolMXBean EDEN = eden();
    /** Where the arrays that fill eden go, so that the compiler cannot drop their allocation. */
    private static volatile Object filler;
    /** The lowest storage alive seen since the last collection. */
    private static long liveSinceCollection;
    private static long collectionsAtLook = -1;
    /** Looks since the last collection; fewer than {@link #MIN_LOOKS} tell too little of the level it left. */
    private static int looksSinceCollection;
    private static final int MIN_LOOKS = 4;
    /**
     * The lowest storage alive right after a collection since the last full one asked for; -1 for none yet. Storage
     * that survived a young collection and died later waits for a full one: past this level by {@link #fullStep},
     * the pacer asks for it.
     */
    private static long retainedFloor = -1;
    /**
     * How far what collections leave alive may grow before a full one is asked for, in bytes: halved (down to a
     * young step) after a full collection that found dead storage, doubled (up to {@link #STEP}) after one that
     * found little, so that storage that really grows (a model being built) costs few full collections.
     */
    private static long fullStep = YOUNG_STEP;
    /** What collections left alive before the last full one asked for; -1 when none awaits its verdict. */
    private static long retainedBeforeFull = -1;
    /**
     * Collections whose lowest level makes the trough that {@link #retainedGrew} judges. Ranks that share a JVM
     * (threads of one process) hold their steps' tensors at different moments, so what one collection leaves alive
     * swings by tens of MiB from the next; only a rise of every level of a window is storage piling up.
     */
    private static final int WINDOW = 4;
    /** What the last {@link #WINDOW} collections left alive, a ring. */
    private static final long[] RETAINED = new long[WINDOW];
    /** Where the next level goes in {@link #RETAINED}. */
    private static int retainedNext;
    /** Levels in {@link #RETAINED} since the last full collection asked for, at most {@link #WINDOW}. */
    private static int retainedCount;

    private NativeMemoryPacer() {
    }

    /** Bytes of storage that open scopes own, which come back when they close. */
    private static final AtomicLong SCOPED = new AtomicLong();

    /**
     * Counts an allocation of {@code bytes} and, after each step of handouts, decides whether to collect; an
     * allocation under an open {@link MemoryScope} is not counted, as its scope gives it back.
     */
    static void beforeAllocate(long bytes) {
        if (MemoryScope.openOnThisThread()) {
            return;
        }
        if (YOUNG_STEP > 0 && EDEN != null && SINCE_LOOK.addAndGet(bytes) > LOOK_BYTES) {
            lookForDeadStorage();
        }
        if (SINCE_DECISION.addAndGet(bytes) <= STEP) {
            return;
        }
        synchronized (LOCK) {
            long since = SINCE_DECISION.get();
            if (since <= STEP) {
                return;
            }
            long live = collectableBytes();
            long count = collections();
            boolean collectorRan = count != collectionsAtDecision;
            sinceCollection = collectorRan ? since : sinceCollection + since;
            boolean collect = collectorRan
                    ? floor >= 0 && live > floor + STEP
                    : sinceCollection > live - sinceCollection;
            if (collect) {
                REQUESTED.incrementAndGet();
                System.gc();
                floor = -1;
                sinceCollection = 0;
                collectionsAtDecision = collections();
            } else {
                floor = floor < 0 ? live : Math.min(floor, live);
                collectionsAtDecision = count;
            }
            SINCE_DECISION.set(0);
        }
    }

    /**
     * Nudges a young collection when the storage alive grew by {@link #YOUNG_STEP} since the last collection, and
     * asks for a full one when what collections leave alive grew by {@link #fullStep}; only where the young
     * generation is small enough to fill (elsewhere its own collections come often enough, and the step rule of
     * {@link #beforeAllocate} covers the rest).
     */
    private static void lookForDeadStorage() {
        synchronized (LOCK) {
            if (SINCE_LOOK.get() <= LOOK_BYTES) {
                return;
            }
            SINCE_LOOK.set(0);
            if (EDEN.getUsage().getCommitted() > EDEN_MAX_BYTES) {
                collectionsAtLook = -1;
                return;
            }
            long live = collectableBytes();
            long count = collections();
            if (count != collectionsAtLook) {
                intervalEnded(count, live);
                return;
            }
            looksSinceCollection++;
            // The cleaners give storage back some moments after a collection found it dead: follow the lowest level.
            liveSinceCollection = Math.min(liveSinceCollection, live);
            if (live - liveSinceCollection > YOUNG_STEP && fillEden()) {
                NUDGED.incrementAndGet();
            }
        }
    }

    /** A collection ran since the last look: judges what the one before it left alive and starts a new interval. */
    private static void intervalEnded(long count, long live) {
        // The lowest level between two collections, seen often enough, is what the earlier one left alive.
        if (collectionsAtLook >= 0 && looksSinceCollection >= MIN_LOOKS && retainedGrew(trough(liveSinceCollection))) {
            REQUESTED.incrementAndGet();
            retainedCount = 0;
            System.gc();
            count = collections();
            live = collectableBytes();
        }
        collectionsAtLook = count;
        liveSinceCollection = live;
        looksSinceCollection = 0;
    }

    /**
     * Adds what a collection left alive to the window; the lowest level of a full window, or -1 while it fills after
     * a full collection.
     */
    private static long trough(long retained) {
        RETAINED[retainedNext] = retained;
        retainedNext = (retainedNext + 1) % WINDOW;
        retainedCount = Math.min(retainedCount + 1, WINDOW);
        if (retainedCount < WINDOW) {
            return -1;
        }
        long lowest = Long.MAX_VALUE;
        for (long level : RETAINED) {
            lowest = Math.min(lowest, level);
        }
        return lowest;
    }

    /**
     * Whether what collections left alive ({@code retained}, the trough of a window; -1 for none yet) grew
     * {@link #fullStep} over its floor: then a full collection is due, and the floor starts anew.
     */
    private static boolean retainedGrew(long retained) {
        if (retained < 0) {
            return false;
        }
        if (retainedBeforeFull >= 0) {
            boolean found = retained < retainedBeforeFull - fullStep / 2;
            fullStep = found ? Math.max(YOUNG_STEP, fullStep / 2) : Math.min(STEP, fullStep * 2);
            retainedBeforeFull = -1;
        }
        if (retainedFloor >= 0 && retained > retainedFloor + fullStep) {
            retainedFloor = -1;
            retainedBeforeFull = retained;
            return true;
        }
        retainedFloor = retainedFloor < 0 ? retained : Math.min(retainedFloor, retained);
        return false;
    }

    /** Allocates short-lived arrays until a collection runs (true), or twice eden's size without one (false). */
    private static boolean fillEden() {
        long eden = EDEN.getUsage().getCommitted();
        long start = collections();
        for (long filled = 0; filled <= 2 * eden + FILL_CHUNK && collections() == start; filled += FILL_CHUNK) {
            filler = new byte[FILL_CHUNK];
        }
        filler = null;
        return collections() != start;
    }

    /**
     * The serial collector's eden (young objects' first space), or null under another collector: G1 sizes its young
     * generation as it goes and counts concurrent phases as collections, so a filled eden there proves nothing, and
     * its young generations are rarely small; the step rule of {@link #beforeAllocate} serves it.
     */
    private static MemoryPoolMXBean eden() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getName().equals("Eden Space")) {
                return pool;
            }
        }
        return null;
    }

    /** Young collections this pacer has nudged so far (for tests and benchmarks). */
    static long nudged() {
        return NUDGED.get();
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

    /** Adds {@code bytes} (negative: takes them away) to the storage that open scopes own. */
    static void scoped(long bytes) {
        SCOPED.addAndGet(bytes);
    }

    /** Storage alive that only a collection can give back: all of it but what open scopes own, in bytes. */
    static long collectableBytes() {
        return liveBytes() - SCOPED.get();
    }

    /** Off-heap bytes held by storages not yet found unreachable or released (for diagnostics and tests). */
    static long liveBytes() {
        return CachingHostAllocator.get().allocatedBytes();
    }
}
