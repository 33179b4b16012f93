package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Storage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Per-thread scratch memory for kernel temporaries that never escape (im2col columns and their gradient).
 * Reusing it avoids allocating and page-faulting megabytes of fresh off-heap memory on every call, which
 * would only be returned when the garbage collector gets to it.
 */
public final class Scratch {
    /** How many independent buffers a kernel may hold at once. */
    public static final int SLOTS = 4;

    private static final ThreadLocal<MemorySegment[]> BUFFERS = ThreadLocal.withInitial(() -> new MemorySegment[SLOTS]);

    private Scratch() {
    }

    /**
     * A buffer of at least {@code bytes} bytes for {@code slot} on this thread; its contents are undefined
     * and it stays valid until the next call for the same slot on the same thread.
     *
     * @throws IllegalArgumentException for a slot outside {@code [0, SLOTS)} or a negative size
     */
    public static MemorySegment get(int slot, long bytes) {
        if (slot < 0 || slot >= SLOTS || bytes < 0) {
            throw new IllegalArgumentException("scratch slot " + slot + " (allowed 0.." + (SLOTS - 1) + ") of "
                    + bytes + " bytes");
        }
        MemorySegment[] buffers = BUFFERS.get();
        MemorySegment s = buffers[slot];
        if (s == null || s.byteSize() < bytes) {
            s = Arena.ofAuto().allocate(Math.max(bytes, 64), Storage.ALIGNMENT);
            buffers[slot] = s;
        }
        return s;
    }
}
