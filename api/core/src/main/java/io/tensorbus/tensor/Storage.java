package io.tensorbus.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The memory behind one or more tensors: an off-heap, 64-byte-aligned {@link MemorySegment} that the
 * network and native devices can read without a copy, plus the version counter that autograd uses to
 * detect in-place changes to tensors saved for backward.
 *
 * <p>Views share a storage (and so its version). Memory is freed by the garbage collector once no
 * tensor refers to it.
 */
public final class Storage {
    /** Alignment of every allocation, in bytes: one cache line, and the widest vector register. */
    public static final long ALIGNMENT = 64;

    private final MemorySegment segment;
    private int version;

    private Storage(MemorySegment segment) {
        this.segment = segment;
    }

    /**
     * Allocates zero-filled storage.
     *
     * @param byteSize size in bytes, at least 0
     * @throws IllegalArgumentException when {@code byteSize} is negative
     */
    public static Storage allocate(long byteSize) {
        if (byteSize < 0) {
            throw new IllegalArgumentException("storage size must be >= 0 bytes, got " + byteSize);
        }
        NativeMemoryPacer.beforeAllocate(byteSize);
        // Arena.ofAuto: freed by the GC when unreachable; allocate() returns zeroed memory.
        Storage s = new Storage(Arena.ofAuto().allocate(Math.max(byteSize, 1), ALIGNMENT).asSlice(0, byteSize));
        NativeMemoryPacer.track(s, byteSize);
        return s;
    }

    /**
     * Wraps existing memory (a mapped file, a network buffer) without copying. The caller keeps the
     * segment's arena alive for as long as tensors use it.
     */
    public static Storage wrap(MemorySegment segment) {
        return new Storage(Objects.requireNonNull(segment, "segment"));
    }

    /** The memory itself. Writing to it directly bypasses autograd's version check. */
    public MemorySegment segment() {
        return segment;
    }

    /** Size in bytes. */
    public long byteSize() {
        return segment.byteSize();
    }

    /** How many in-place changes this storage has seen; autograd compares it with the version at save time. */
    public int version() {
        return version;
    }

    /** Records an in-place change (called by every in-place op). */
    public void bumpVersion() {
        version++;
    }
}
