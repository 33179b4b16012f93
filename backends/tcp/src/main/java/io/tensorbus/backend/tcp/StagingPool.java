package io.tensorbus.backend.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The native host memory (page-aligned) the transport works in, reused from one collective to the next: staging
 * for device regions on their way to and from the sockets, collectives' scratch (partial sums, a partner's
 * message to reduce) and messages that arrived before their receive was posted. Fresh memory costs a page fault
 * per page on first touch, and memory left to the garbage collector stays resident until a collection finds it,
 * so buffers whose use ended come back here at once ({@link #give}).
 *
 * <p>The pool keeps no more than was ever taken at once (and at most {@link #MAX_BYTES}): more could not be used
 * together. Past that it lets the buffer returned longest ago go. A request takes the smallest free buffer of at
 * least its size and at most twice it; fresh buffers are rounded up to a quarter of a power of two, so that the
 * next request of a similar size fits.
 */
final class StagingPool {
    /** At most this much memory is kept for reuse, in bytes. */
    static final long MAX_BYTES = 256L << 20;

    /** Free buffers, whole, the most recently returned first. */
    private final ArrayDeque<MemorySegment> free = new ArrayDeque<>();
    /**
     * The block behind each slice handed out and not given back. Weak: a slice its taker dropped (a failed
     * operation) takes its block to the collector instead of holding it here.
     */
    private final Map<MemorySegment, MemorySegment> taken = new WeakHashMap<>();
    private long pooledBytes;
    private long takenBytes;
    private long peakTakenBytes;

    /**
     * Native memory of {@code bytes} bytes, 4096-byte aligned, with arbitrary contents; give it back with
     * {@link #give} once nothing reads or writes it any more (a buffer never given back is left to the collector).
     */
    synchronized MemorySegment take(long bytes) {
        MemorySegment block = bestFit(bytes);
        if (block == null) {
            // Page-aligned: drivers use such host memory in place (OpenCL's USE_HOST_PTR), else they copy it.
            block = Arena.ofAuto().allocate(sizeClass(bytes), 4096);
        }
        takenBytes += block.byteSize();
        peakTakenBytes = Math.max(peakTakenBytes, takenBytes);
        MemorySegment slice = block.asSlice(0, bytes);
        taken.put(slice, block);
        return slice;
    }

    private MemorySegment bestFit(long bytes) {
        MemorySegment best = null;
        for (MemorySegment b : free) {
            long size = b.byteSize();
            if (size >= bytes && size <= 2 * Math.max(bytes, 4096) && (best == null || size < best.byteSize())) {
                best = b;
            }
        }
        if (best != null) {
            removeExact(best);
            pooledBytes -= best.byteSize();
        }
        return best;
    }

    /** Removes this very buffer: segments with the same address and size are equal, never the same block here. */
    private void removeExact(MemorySegment block) {
        for (Iterator<MemorySegment> it = free.iterator(); it.hasNext(); ) {
            if (it.next() == block) {
                it.remove();
                return;
            }
        }
    }

    /**
     * Takes back {@code segment}, exactly as {@link #take} returned it; the caller no longer touches it.
     */
    synchronized void give(MemorySegment segment) {
        MemorySegment block = taken.remove(segment);
        if (block == null) {
            throw new IllegalArgumentException("not a buffer of this pool, or given back twice: " + segment);
        }
        takenBytes -= block.byteSize();
        long bound = Math.min(MAX_BYTES, peakTakenBytes);
        if (block.byteSize() > bound) {
            return;
        }
        while (pooledBytes + block.byteSize() > bound) {
            pooledBytes -= free.removeLast().byteSize();
        }
        free.addFirst(block);
        pooledBytes += block.byteSize();
    }

    /** How much memory the pool holds for reuse, in bytes. */
    synchronized long pooledBytes() {
        return pooledBytes;
    }

    /**
     * The size of a fresh buffer for {@code bytes}: the next multiple of a quarter of the power of two below it
     * (4 KiB at least), so that a buffer wastes under a fifth of itself and fits the next request of about the size.
     */
    static long sizeClass(long bytes) {
        if (bytes <= 4096) {
            return 4096;
        }
        long quarter = Long.highestOneBit(bytes - 1) / 4;
        return (bytes + quarter - 1) / quarter * quarter;
    }
}
