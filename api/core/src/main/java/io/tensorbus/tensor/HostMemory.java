package io.tensorbus.tensor;

/**
 * The host memory behind tensors: statistics and control of the cache that reuses freed storage (PyTorch's
 * {@code torch.cuda.memory_stats()}, {@code empty_cache()} and {@code reset_peak_memory_stats()}, for the CPU).
 */
public final class HostMemory {
    private HostMemory() {
    }

    /** A snapshot of the cache's counters. */
    public static MemoryStats stats() {
        return CachingHostAllocator.get().stats();
    }

    /** Frees every cached block (live storage is untouched). */
    public static void emptyCache() {
        CachingHostAllocator.get().trim(0);
    }

    /** Starts {@link MemoryStats#peakAllocatedBytes()} again from the bytes allocated now. */
    public static void resetPeakStats() {
        CachingHostAllocator.get().resetPeak();
    }
}
