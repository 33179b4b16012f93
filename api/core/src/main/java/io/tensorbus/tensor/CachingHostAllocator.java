package io.tensorbus.tensor;

import com.sun.management.OperatingSystemMXBean;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The host counterpart of PyTorch's CUDA caching allocator: storage that dies goes back to pools of blocks of
 * the same size class, already touched, and the next allocation of that class (or of one up to a third smaller,
 * {@link #BEST_FIT_SLACK}) takes one instead of fresh native memory (which the kernel faults in page by page). A
 * training step allocates the same sizes every time, so after the first steps nearly every allocation is a hit.
 * The pools keep at most {@link #limit()} bytes, and never more than live storage held at once in the last 10 to
 * 20 s ({@link #MIN_BOUND_BYTES} at least); past that, the blocks returned longest ago go back to the C library,
 * so that sizes that stopped coming back do not hold memory.
 *
 * <p>Blocks come from {@link NativeBlocks}, outside the JVM's direct-memory reservation, and all tensor memory
 * (live and cached) stays under {@link #memoryLimit()}: an allocation that would pass it first empties the cache,
 * then asks the garbage collector for the storage that died unnoticed, and fails only then, with an
 * {@link OutOfMemoryError} that names what is live, what is cached, the limit and the setting that raises it.
 *
 * <p>Each handout is the block seen through a fresh automatic scope ({@link MemorySegment#reinterpret(long, Arena,
 * java.util.function.Consumer)}), and the block goes back to its pool when that scope's last segment became
 * unreachable, not when the {@link Storage} did: a kernel that still holds a slice of the memory after its tensor
 * died keeps the block out of the pool, so a block handed out again never backs live memory. A storage may also
 * be {@linkplain Storage#release() released}, which gives its block back at once (and only once). Caching is on
 * unless the system property {@value #PROPERTY} is {@code false}; the cache's bound is {@value #LIMIT_PROPERTY}
 * bytes (by default a quarter of the memory limit, at most 1 GiB) and the memory limit {@value
 * #MEMORY_LIMIT_PROPERTY} bytes (by default {@link #defaultMemoryLimit()}).
 */
final class CachingHostAllocator {
    /** The system property that turns caching off ({@code false}). */
    static final String PROPERTY = "tensorbus.hostCache";
    /** The system property that bounds the cached bytes. */
    static final String LIMIT_PROPERTY = "tensorbus.hostCacheBytes";
    /** The system property that bounds all tensor memory, live and cached. */
    static final String MEMORY_LIMIT_PROPERTY = "tensorbus.hostMemoryBytes";
    /** The most the cache keeps by default, in bytes. */
    static final long DEFAULT_CACHE_BYTES = 1L << 30;
    /**
     * The cache keeps at most as many bytes as live storage held at once lately ({@link #bound()}): more could
     * not be handed out together, and blocks of sizes that do not come back would only raise the footprint. Below
     * this many bytes it keeps them all the same, for small jobs.
     */
    static final long MIN_BOUND_BYTES = 32L << 20;
    /**
     * "Lately" is this window and the one before it, in nanoseconds: a peak of live storage (dead tensors the
     * collector found late, a larger batch) raises the bound for 10 to 20 s, not for the rest of the run.
     */
    static final long PEAK_WINDOW_NANOS = 10_000_000_000L;
    /**
     * How much larger than asked a cached block may be and still be handed out, as a share of the request: with
     * sizes that vary (a data loader's last batch, a collective's buckets, RPC payloads) an exact size class alone
     * rarely matches, and every miss costs fresh pages that the kernel faults in and clears.
     */
    static final double BEST_FIT_SLACK = 0.5;
    /**
     * How often an allocation over the limit asks for a collection before it fails; it waits 1, 2, 4, ... ms
     * after each (half a second in all), as the JDK's direct buffers do, for the cleaners to give blocks back.
     */
    static final int COLLECTIONS_BEFORE_FAILING = 9;
    /**
     * With {@code -Dtensorbus.fillUninitializedMemory=true}, uninitialized storage and every block given back are
     * filled with {@link #FILL_BYTE} (a NaN in every float type, -1 in every integer type), as PyTorch's
     * {@code torch.utils.deterministic.fill_uninitialized_memory} fills {@code torch.empty}: a kernel that reads what
     * it never wrote, or memory after its storage died, then shows NaNs rather than plausible stale numbers. The
     * core test suite runs with it on.
     */
    static final boolean FILL_UNINITIALIZED = Boolean.getBoolean("tensorbus.fillUninitializedMemory");
    /** The byte {@link #FILL_UNINITIALIZED} writes. */
    static final byte FILL_BYTE = (byte) 0xFF;

    private static final CachingHostAllocator INSTANCE = fromProperties();

    private final boolean enabled;
    private final long limit;
    private final long memoryLimit;
    /** Free blocks by size class, most recently returned first. */
    private final TreeMap<Long, ArrayDeque<Cached>> pools = new TreeMap<>();
    /** Every cached block by the order it was returned in, oldest first: what eviction frees first. */
    private final LinkedHashMap<Long, Cached> byAge = new LinkedHashMap<>();
    private long returns;
    private long cachedBytes;
    private long allocatedBytes;
    private long peakAllocatedBytes;
    private final long windowNanos;
    /** The most bytes live storage held in this window and in the one before: what the cache may usefully hold. */
    private long windowPeak;
    private long previousWindowPeak;
    private long windowStart = System.nanoTime();
    private long allocations;
    private long hits;
    private long frees;
    private long evictedBytes;

    /**
     * @param limit the most bytes the cache keeps
     * @param memoryLimit the most bytes of tensor memory, live and cached together
     * @throws IllegalArgumentException when a limit is negative
     */
    CachingHostAllocator(boolean enabled, long limit, long memoryLimit) {
        this(enabled, limit, memoryLimit, PEAK_WINDOW_NANOS);
    }

    /** With windows of {@code windowNanos} for the recent peak of live storage (tests shorten them). */
    CachingHostAllocator(boolean enabled, long limit, long memoryLimit, long windowNanos) {
        if (limit < 0) {
            throw new IllegalArgumentException(LIMIT_PROPERTY + "=" + limit + " must be at least 0");
        }
        if (memoryLimit < 0) {
            throw new IllegalArgumentException(MEMORY_LIMIT_PROPERTY + "=" + memoryLimit + " must be at least 0");
        }
        this.enabled = enabled;
        this.limit = limit;
        this.memoryLimit = memoryLimit;
        this.windowNanos = windowNanos;
    }

    private static CachingHostAllocator fromProperties() {
        long memoryLimit = Long.getLong(MEMORY_LIMIT_PROPERTY, defaultMemoryLimit());
        return new CachingHostAllocator(!"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true")),
                Long.getLong(LIMIT_PROPERTY, Math.min(DEFAULT_CACHE_BYTES, memoryLimit / 4)), memoryLimit);
    }

    /**
     * The memory this JVM may give tensors unless told otherwise, in bytes: the machine's memory (the container's
     * limit inside one) less what the heap may grow to, and at least a quarter of the machine's.
     */
    static long defaultMemoryLimit() {
        long total = totalMemory();
        return Math.max(total - Runtime.getRuntime().maxMemory(), total / 4);
    }

    /** The memory of the machine or of the container this JVM runs in, in bytes. */
    static long totalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean()
                instanceof OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Long.MAX_VALUE;
    }

    /** The allocator of this JVM. */
    static CachingHostAllocator get() {
        return INSTANCE;
    }

    boolean enabled() {
        return enabled;
    }

    long limit() {
        return limit;
    }

    long memoryLimit() {
        return memoryLimit;
    }

    /**
     * The size class of {@code bytes}: rounded up to 64 bytes below 4 KiB, 4 KiB below 1 MiB, 64 KiB below
     * 64 MiB and 1 MiB above, so that a class wastes at most 1/16 of a block beyond the smallest classes.
     */
    static long sizeClass(long bytes) {
        long granule = bytes < (4L << 10) ? 64 : bytes < (1L << 20) ? 4L << 10 : bytes < (64L << 20) ? 64L << 10
                : 1L << 20;
        return Math.max(granule, (bytes + granule - 1) / granule * granule);
    }

    /**
     * One handout of a block.
     *
     * @param segment the block's memory in a scope of its own; the block comes back when it and every slice of it
     *        became unreachable
     * @param block the block itself, as the pool keeps it
     * @param returned set once the block went back, so that it goes back once
     */
    record Handout(MemorySegment segment, MemorySegment block, AtomicBoolean returned) {
        /** Gives the block back now (a release); later calls, and the scope's cleanup, do nothing. */
        void giveBack(CachingHostAllocator allocator) {
            if (returned.compareAndSet(false, true)) {
                allocator.give(block);
            }
        }
    }

    /**
     * A block of at least {@code bytes} bytes, aligned to {@link Storage#ALIGNMENT}, seen through a scope of its
     * own; zero-filled when {@code zeroed}, else holding whatever its last storage left (a fresh block is zero
     * either way).
     */
    Handout hand(long bytes, boolean zeroed) {
        MemorySegment block = take(bytes, zeroed);
        AtomicBoolean returned = new AtomicBoolean();
        // The cleanup must not capture the scoped segment, or its scope would never become unreachable.
        MemorySegment scoped = block.reinterpret(block.byteSize(), Arena.ofAuto(), s -> {
            if (returned.compareAndSet(false, true)) {
                give(block);
            }
        });
        return new Handout(scoped, block, returned);
    }

    /**
     * A raw block of at least {@code bytes} bytes, aligned to {@link Storage#ALIGNMENT}, for {@link #give} to take
     * back; zero-filled when {@code zeroed}.
     *
     * @throws OutOfMemoryError when it would pass {@link #memoryLimit()} although the cache is empty and the
     *         collector found no dead storage, or when the C library has no memory
     */
    MemorySegment take(long bytes, boolean zeroed) {
        long size = sizeClass(bytes);
        // Every handout counts, hit or miss: the dead storage the collector has not found yet is what it sums.
        NativeMemoryPacer.beforeAllocate(size);
        MemorySegment block = checkOut(size);
        if (block == null) {
            block = fresh(size);
        }
        if (zeroed) {
            block.asSlice(0, bytes).fill((byte) 0);
        }
        return block;
    }

    /**
     * New memory for a handout of {@code size} bytes that {@link #checkOut} already counted: within the limit,
     * emptying the cache and collecting dead storage first when it would pass it.
     */
    private MemorySegment fresh(long size) {
        boolean refused = false;
        for (int attempt = 0; ; attempt++) {
            if (makeRoom()) {
                MemorySegment block = NativeBlocks.allocate(size, Storage.ALIGNMENT);
                if (block != null) {
                    return block;
                }
                refused = true;
                trim(0);
            }
            if (attempt == COLLECTIONS_BEFORE_FAILING || !pause(attempt)) {
                throw outOfMemory(size, refused);
            }
        }
    }

    /** Trims the cache so that live and cached memory fit the limit; true when live memory alone fits it. */
    private synchronized boolean makeRoom() {
        if (allocatedBytes + cachedBytes > memoryLimit) {
            trim(Math.max(0, memoryLimit - allocatedBytes));
        }
        return allocatedBytes <= memoryLimit;
    }

    /**
     * Asks for a collection, whose cleaners give dead storage back, and waits {@code 2^attempt} ms for them;
     * false when interrupted (the interrupt stays set).
     */
    private static boolean pause(int attempt) {
        System.gc();
        try {
            Thread.sleep(1L << attempt);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Uncounts the failed handout of {@code size} bytes and says why there is no memory for it. */
    private OutOfMemoryError outOfMemory(long size, boolean refused) {
        long live;
        long cached;
        synchronized (this) {
            allocations--;
            allocatedBytes -= size;
            live = allocatedBytes;
            cached = cachedBytes;
        }
        String why = refused ? "the C library has no memory left for it" : "that would pass the limit";
        return new OutOfMemoryError("cannot allocate " + bytes(size) + " of tensor memory: " + why + " (live tensors "
                + bytes(live) + ", cached " + bytes(cached) + ", limit " + bytes(memoryLimit)
                + "); raise the limit with -D"
                + MEMORY_LIMIT_PROPERTY + "=BYTES (by default the machine's or container's memory less the heap cap)"
                + " or free tensors sooner (MemoryScope, Storage.release())");
    }

    /** {@code n} bytes as people read them: {@code 1.5 GiB}, {@code 8.0 MiB}, {@code 512 B}. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n / 1024.0;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** A freed block in the cache, and when it came back (the count of returns then). */
    private record Cached(MemorySegment block, long returned) {
    }

    /**
     * Pops a cached block for a handout of class {@code size}: of the smallest cached class that holds it, if that
     * is at most {@link #BEST_FIT_SLACK} larger; null for none. Counts the handout either way (a miss as
     * {@code size} bytes, which the fresh block will have).
     */
    private synchronized MemorySegment checkOut(long size) {
        allocations++;
        Map.Entry<Long, ArrayDeque<Cached>> fit = enabled ? pools.ceilingEntry(size) : null;
        MemorySegment block = null;
        if (fit != null && fit.getKey() - size <= size * BEST_FIT_SLACK) {
            Cached c = fit.getValue().pop();
            if (fit.getValue().isEmpty()) {
                pools.remove(fit.getKey());
            }
            byAge.remove(c.returned());
            block = c.block();
            hits++;
            cachedBytes -= block.byteSize();
        }
        allocatedBytes += block == null ? size : block.byteSize();
        peakAllocatedBytes = Math.max(peakAllocatedBytes, allocatedBytes);
        observePeak();
        return block;
    }

    /** Bytes held by live storage (see {@link MemoryStats#allocatedBytes()}), without a whole snapshot. */
    synchronized long allocatedBytes() {
        return allocatedBytes;
    }

    /** Counts live storage toward this window's peak, and starts a new window when this one is over. */
    private void observePeak() {
        long now = System.nanoTime();
        if (now - windowStart >= windowNanos) {
            // A window with no handout at all leaves no peak of its own: the one before it is over too.
            previousWindowPeak = now - windowStart >= 2 * windowNanos ? 0 : windowPeak;
            windowPeak = 0;
            windowStart = now;
        }
        windowPeak = Math.max(windowPeak, allocatedBytes);
    }

    /** The most the cache holds now: the configured limit, or the most storage live lately if that is less. */
    private long bound() {
        return Math.min(limit, Math.max(MIN_BOUND_BYTES, Math.max(windowPeak, previousWindowPeak)));
    }

    /** Takes back a block {@link #take} handed out, whose storage is gone; past the bound, frees the oldest. */
    synchronized void give(MemorySegment block) {
        long size = block.byteSize();
        frees++;
        allocatedBytes -= size;
        if (!enabled || size > limit) {
            NativeBlocks.free(block);
            return;
        }
        if (FILL_UNINITIALIZED) {
            block.fill(FILL_BYTE);
        }
        Cached c = new Cached(block, returns++);
        pools.computeIfAbsent(size, s -> new ArrayDeque<>()).push(c);
        byAge.put(c.returned(), c);
        cachedBytes += size;
        long bound = bound();
        if (cachedBytes > bound) {
            trim(bound);
        }
    }

    /** Frees cached blocks, the least recently returned first, until at most {@code keep} bytes remain. */
    synchronized void trim(long keep) {
        Iterator<Cached> oldest = byAge.values().iterator();
        while (cachedBytes > keep && oldest.hasNext()) {
            Cached c = oldest.next();
            oldest.remove();
            long size = c.block().byteSize();
            ArrayDeque<Cached> pool = pools.get(size);
            // The oldest block of its class sits at the end of its pool.
            pool.removeLast();
            if (pool.isEmpty()) {
                pools.remove(size);
            }
            cachedBytes -= size;
            evictedBytes += size;
            NativeBlocks.free(c.block());
        }
    }

    synchronized MemoryStats stats() {
        return new MemoryStats(enabled, allocatedBytes, peakAllocatedBytes, cachedBytes, limit, memoryLimit,
                allocations, hits, frees, evictedBytes);
    }

    synchronized void resetPeak() {
        peakAllocatedBytes = allocatedBytes;
    }
}
