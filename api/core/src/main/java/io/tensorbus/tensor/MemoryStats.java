package io.tensorbus.tensor;

/**
 * What the host memory cache holds and has done, as {@code torch.cuda.memory_stats()} reports for CUDA: bytes
 * are counted in the cache's size classes (a tensor of 1,000 bytes holds a 1,024-byte block).
 *
 * @param caching whether freed storage is cached ({@code -Dtensorbus.hostCache=false} turns it off)
 * @param allocatedBytes bytes held by storage that is alive (not yet found unreachable or released)
 * @param peakAllocatedBytes the most {@code allocatedBytes} has been since start or {@link HostMemory#resetPeakStats()}
 * @param cachedBytes bytes of freed blocks kept for reuse
 * @param cacheLimitBytes the most {@code cachedBytes} may grow to before the cache trims itself
 * @param memoryLimitBytes the most tensor memory, live and cached, this JVM allocates: past it an allocation
 *        fails with an {@link OutOfMemoryError} (system property {@code tensorbus.hostMemoryBytes})
 * @param allocations storage allocations so far
 * @param cacheHits allocations served from the cache
 * @param frees blocks given back (by the garbage collector's cleaners or by releases)
 * @param evictedBytes bytes the cache dropped to stay under its limit, or on {@link HostMemory#emptyCache()}
 */
public record MemoryStats(boolean caching, long allocatedBytes, long peakAllocatedBytes, long cachedBytes,
                          long cacheLimitBytes, long memoryLimitBytes, long allocations, long cacheHits, long frees,
                          long evictedBytes) {

    /** The share of allocations the cache served, from 0 to 1 (0 before any). */
    public double hitRate() {
        return allocations == 0 ? 0 : (double) cacheHits / allocations;
    }
}
