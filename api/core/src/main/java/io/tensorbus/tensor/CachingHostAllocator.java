package io.tensorbus.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The host counterpart of PyTorch's CUDA caching allocator: storage that dies goes back to pools of blocks of
 * the same size class, already touched, and the next allocation of that class takes one instead of fresh native
 * memory (which the JDK zero-fills and the kernel faults in page by page). A training step allocates the same
 * sizes every time, so after the first steps nearly every allocation is a hit. The pools keep at most
 * {@link #limit()} bytes; past it, the blocks cached longest are dropped, and the garbage collector frees them.
 *
 * <p>Each handout is the block seen through a fresh automatic scope ({@link MemorySegment#reinterpret(long, Arena,
 * java.util.function.Consumer)}), and the block goes back to its pool when that scope's last segment became
 * unreachable, not when the {@link Storage} did: a kernel that still holds a slice of the memory after its tensor
 * died keeps the block out of the pool, so a block handed out again never backs live memory. A storage may also
 * be {@linkplain Storage#release() released}, which gives its block back at once (and only once). Caching is on
 * unless the system property {@value #PROPERTY} is {@code false}; the limit is {@value #LIMIT_PROPERTY} bytes
 * (default 1 GiB).
 */
final class CachingHostAllocator {
    /** The system property that turns caching off ({@code false}). */
    static final String PROPERTY = "tensorbus.hostCache";
    /** The system property that bounds the cached bytes. */
    static final String LIMIT_PROPERTY = "tensorbus.hostCacheBytes";
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

    private static final CachingHostAllocator INSTANCE = new CachingHostAllocator(
            !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true")),
            Long.getLong(LIMIT_PROPERTY, 1L << 30));

    private final boolean enabled;
    private final long limit;
    /** Free blocks by size class, most recently returned first; iteration order is the order classes appeared. */
    private final Map<Long, ArrayDeque<MemorySegment>> pools = new HashMap<>();
    private long cachedBytes;
    private long allocatedBytes;
    private long peakAllocatedBytes;
    private long allocations;
    private long hits;
    private long frees;
    private long evictedBytes;

    CachingHostAllocator(boolean enabled, long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException(LIMIT_PROPERTY + "=" + limit + " must be at least 0");
        }
        this.enabled = enabled;
        this.limit = limit;
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
     */
    MemorySegment take(long bytes, boolean zeroed) {
        long size = sizeClass(bytes);
        // Every handout counts, hit or miss: the dead storage the collector has not found yet is what it sums.
        NativeMemoryPacer.beforeAllocate(size);
        MemorySegment block = checkOut(size);
        if (block == null) {
            block = Arena.ofAuto().allocate(size, Storage.ALIGNMENT);
        } else if (zeroed) {
            block.asSlice(0, bytes).fill((byte) 0);
        }
        return block;
    }

    /** Counts a handout of {@code size} bytes and pops a cached block of that class, or returns null for none. */
    private synchronized MemorySegment checkOut(long size) {
        allocations++;
        allocatedBytes += size;
        peakAllocatedBytes = Math.max(peakAllocatedBytes, allocatedBytes);
        ArrayDeque<MemorySegment> pool = enabled ? pools.get(size) : null;
        if (pool == null || pool.isEmpty()) {
            return null;
        }
        hits++;
        cachedBytes -= size;
        return pool.pop();
    }

    /** Bytes held by live storage (see {@link MemoryStats#allocatedBytes()}), without a whole snapshot. */
    synchronized long allocatedBytes() {
        return allocatedBytes;
    }

    /** Takes back a block {@link #take} handed out, whose storage is gone; past the limit, evicts. */
    synchronized void give(MemorySegment block) {
        if (FILL_UNINITIALIZED) {
            block.fill(FILL_BYTE);
        }
        long size = block.byteSize();
        frees++;
        allocatedBytes -= size;
        if (!enabled || size > limit) {
            return;
        }
        pools.computeIfAbsent(size, s -> new ArrayDeque<>()).push(block);
        cachedBytes += size;
        if (cachedBytes > limit) {
            trim(limit / 2);
        }
    }

    /** Drops cached blocks, the least recently returned of each class first, until at most {@code keep} remain. */
    synchronized void trim(long keep) {
        Iterator<ArrayDeque<MemorySegment>> classes = pools.values().iterator();
        while (cachedBytes > keep && classes.hasNext()) {
            ArrayDeque<MemorySegment> pool = classes.next();
            while (cachedBytes > keep && !pool.isEmpty()) {
                long size = pool.removeLast().byteSize();
                cachedBytes -= size;
                evictedBytes += size;
            }
            if (pool.isEmpty()) {
                classes.remove();
            }
        }
    }

    synchronized MemoryStats stats() {
        return new MemoryStats(enabled, allocatedBytes, peakAllocatedBytes, cachedBytes, limit, allocations, hits,
                frees, evictedBytes);
    }

    synchronized void resetPeak() {
        peakAllocatedBytes = allocatedBytes;
    }
}
