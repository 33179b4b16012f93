package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.TensorInternals;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The host memory cache: reuse, zeroing, its bound, statistics, releases, and no block behind two live tensors. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CachingHostAllocatorTest {

    @Test
    void aFreedBlockIsHandedOutAgainZeroedOnlyWhenAskedTo() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 20, Long.MAX_VALUE);
        MemorySegment first = cache.take(1000, true);
        assertEquals(1024, first.byteSize(), "1,000 bytes take a 1,024-byte block");
        first.fill((byte) 7);
        cache.give(first);
        MemorySegment dirty = cache.take(1000, false);
        assertEquals(first.address(), dirty.address(), "the same block comes back");
        // The suite fills freed blocks (tensorbus.fillUninitializedMemory); without that they keep their bytes.
        byte stale = CachingHostAllocator.FILL_UNINITIALIZED ? CachingHostAllocator.FILL_BYTE : 7;
        assertEquals(stale, dirty.get(ValueLayout.JAVA_BYTE, 999), "an uninitialized take skips the zero-fill");
        cache.give(dirty);
        MemorySegment zeroed = cache.take(990, true);
        assertEquals(first.address(), zeroed.address());
        for (long i = 0; i < 990; i++) {
            assertEquals(0, zeroed.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of a zeroed take");
        }
        MemoryStats s = cache.stats();
        assertEquals(3, s.allocations());
        assertEquals(2, s.cacheHits());
        assertEquals(2, s.frees());
        assertEquals(1024, s.allocatedBytes());
        assertEquals(1024, s.peakAllocatedBytes());
        assertEquals(0, s.cachedBytes());
        assertEquals(2.0 / 3, s.hitRate(), 1e-12);
    }

    @Test
    void sizeClassesHoldTheRequestAndWasteAtMostOneGranule() {
        assertEquals(64, CachingHostAllocator.sizeClass(0));
        assertEquals(64, CachingHostAllocator.sizeClass(1));
        assertEquals(4096, CachingHostAllocator.sizeClass(4096));
        assertEquals(8192, CachingHostAllocator.sizeClass(4097));
        assertEquals((1L << 20) + (64L << 10), CachingHostAllocator.sizeClass((1L << 20) + 1));
        assertEquals(65L << 20, CachingHostAllocator.sizeClass((64L << 20) + 1));
        SplittableRandom random = new SplittableRandom(17);
        for (int i = 0; i < 10_000; i++) {
            long bytes = random.nextLong(1, 1L << 30);
            long c = CachingHostAllocator.sizeClass(bytes);
            assertTrue(c >= bytes && c - bytes < Math.max(64, c / 16) && c % 64 == 0, bytes + " -> " + c);
        }
    }

    @Test
    void theCacheStaysUnderItsLimitAndEmptiesOnRequest() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 20, Long.MAX_VALUE);
        List<MemorySegment> blocks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            blocks.add(cache.take(64L << 10, false));
        }
        blocks.forEach(cache::give);
        MemoryStats s = cache.stats();
        assertTrue(s.cachedBytes() <= 1L << 20, "cached " + s.cachedBytes());
        assertTrue(s.evictedBytes() >= (40L << 16) - (1L << 20), "evicted " + s.evictedBytes());
        assertEquals(40L * (64 << 10), s.cachedBytes() + s.evictedBytes(), "every byte is cached or evicted");
        cache.trim(0);
        assertEquals(0, cache.stats().cachedBytes());
        // A block larger than the whole cache is never kept.
        cache.give(cache.take(2L << 20, false));
        assertEquals(0, cache.stats().cachedBytes());
    }

    /**
     * The cache holds no more than live storage ever held at once (32 MiB at least), and frees the blocks returned
     * longest ago first: sizes that do not come back make way for those that do.
     */
    @Test
    void theCacheHoldsNoMoreThanTheMostStorageEverLiveOldestFreedFirst() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 30, Long.MAX_VALUE);
        for (int i = 0; i < 100; i++) {
            // 100 sizes of about 1 MiB, one live at a time: only the floor of 32 MiB stays cached.
            cache.give(cache.take((1L << 20) + i * (64L << 10), false));
        }
        MemoryStats s = cache.stats();
        assertTrue(s.cachedBytes() <= CachingHostAllocator.MIN_BOUND_BYTES, s.toString());
        assertTrue(s.evictedBytes() > 0, s.toString());
        List<MemorySegment> live = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            live.add(cache.take(32L << 20, false));
        }
        live.forEach(cache::give);
        s = cache.stats();
        assertTrue(s.cachedBytes() <= 128L << 20, "at most the 128 MiB once live: " + s);
        long hits = s.cacheHits();
        for (int i = 0; i < 4; i++) {
            cache.take(32L << 20, false);
        }
        assertEquals(hits + 4, cache.stats().cacheHits(), "the 1 MiB blocks went first, the 32 MiB ones stayed");
    }

    /** A peak of live storage raises the cache's bound for two windows, not for good. */
    @Test
    void aPeakOfLiveStorageRaisesTheBoundOnlyForAWhile() throws Exception {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 30, Long.MAX_VALUE, 50_000_000L);
        List<MemorySegment> live = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            live.add(cache.take(32L << 20, false));
        }
        live.forEach(cache::give);
        assertEquals(128L << 20, cache.stats().cachedBytes(), "within the window all 128 MiB may stay");
        Thread.sleep(120);
        cache.give(cache.take(1L << 20, false));
        MemoryStats s = cache.stats();
        assertTrue(s.cachedBytes() <= CachingHostAllocator.MIN_BOUND_BYTES, "two windows later: " + s);
    }

    /** A cached block up to half larger than the request serves it; a larger one does not. */
    @Test
    void aSomewhatLargerCachedBlockServesARequestAndCountsWhole() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 30, Long.MAX_VALUE);
        MemorySegment block = cache.take(1L << 20, false);
        cache.give(block);
        MemorySegment smaller = cache.take(800L << 10, true);
        assertEquals(block.address(), smaller.address());
        assertEquals(1L << 20, smaller.byteSize());
        assertEquals(1L << 20, cache.stats().allocatedBytes(), "the whole block is counted");
        assertEquals(0, smaller.get(ValueLayout.JAVA_BYTE, (800L << 10) - 1), "the requested bytes are zeroed");
        cache.give(smaller);
        MemorySegment small = cache.take(400L << 10, false);
        assertEquals(400L << 10, small.byteSize(), "a block 2.5 times the request is left in the cache");
        assertEquals(1, cache.stats().cacheHits());
        cache.give(small);
        assertEquals(0, cache.stats().allocatedBytes());
    }

    @Test
    void withCachingOffNothingIsReused() {
        CachingHostAllocator cache = new CachingHostAllocator(false, 1L << 20, Long.MAX_VALUE);
        MemorySegment a = cache.take(4096, true);
        cache.give(a);
        MemorySegment b = cache.take(4096, true);
        cache.give(b);
        MemoryStats s = cache.stats();
        assertEquals(2, s.allocations());
        assertEquals(0, s.cacheHits());
        assertEquals(0, s.cachedBytes());
        assertEquals(0, s.allocatedBytes());
        assertThrows(IllegalArgumentException.class, () -> new CachingHostAllocator(true, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> new CachingHostAllocator(true, 1, -1));
    }

    /** Live and cached blocks together stay under the memory limit: a fresh block first frees cached ones. */
    @Test
    void anAllocationPastTheMemoryLimitFreesCachedBlocksFirst() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 20, 1L << 20);
        MemorySegment a = cache.take(512L << 10, false);
        MemorySegment b = cache.take(256L << 10, false);
        cache.give(a);
        cache.give(b);
        assertEquals(768L << 10, cache.stats().cachedBytes());
        MemorySegment c = cache.take(768L << 10, true);
        MemoryStats s = cache.stats();
        assertEquals(768L << 10, s.allocatedBytes());
        assertTrue(s.allocatedBytes() + s.cachedBytes() <= 1L << 20, s.toString());
        assertTrue(s.evictedBytes() >= 512L << 10, s.toString());
        assertEquals(1L << 20, s.memoryLimitBytes());
        cache.give(c);
    }

    /**
     * Past the limit with nothing cached and nothing dead, an allocation fails on the allocating thread with an
     * OutOfMemoryError naming the sizes and the setting, and counts nothing.
     */
    @Test
    void anAllocationPastTheLimitFailsNamingLiveCachedAndTheSetting() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 20, 1L << 20);
        MemorySegment live = cache.take(768L << 10, false);
        OutOfMemoryError e = assertThrows(OutOfMemoryError.class, () -> cache.take(512L << 10, false));
        assertTrue(e.getMessage().startsWith("cannot allocate 512.0 KiB of tensor memory: that would pass the limit"
                + " (live tensors 768.0 KiB, cached 0 B, limit 1.0 MiB); raise the limit with"
                + " -Dtensorbus.hostMemoryBytes=BYTES"), e.getMessage());
        MemoryStats s = cache.stats();
        assertEquals(1, s.allocations());
        assertEquals(768L << 10, s.allocatedBytes());
        cache.give(live);
        MemorySegment again = cache.take(512L << 10, false);
        assertEquals(again.byteSize(), cache.stats().allocatedBytes(), "it fits once the live block is freed");
        cache.give(again);
    }

    /** Storage nobody refers to any more, not yet found by the collector, is collected to make room. */
    @Test
    void deadStorageIsCollectedToMakeRoom() {
        CachingHostAllocator cache = new CachingHostAllocator(true, 1L << 20, 1L << 20);
        for (int i = 0; i < 8; i++) {
            // Each handout dies at once; only its cleaner, after a collection, gives the block back.
            assertEquals(700L << 10, cache.hand(700L << 10, false).segment().byteSize());
        }
        assertTrue(cache.stats().allocatedBytes() <= 1L << 20, cache.stats().toString());
    }

    @Test
    void theDefaultLimitsLeaveTheHeapItsRoomAndBoundTheCache() {
        long total = CachingHostAllocator.totalMemory();
        long limit = CachingHostAllocator.defaultMemoryLimit();
        assertTrue(limit <= total && limit >= total / 4, limit + " of " + total);
        assertTrue(limit >= total - Runtime.getRuntime().maxMemory(), limit + " of " + total);
        assertEquals("1.5 GiB", CachingHostAllocator.bytes(3L << 29));
        assertEquals("512 B", CachingHostAllocator.bytes(512));
    }

    @Test
    void aReleasedStorageFailsEveryLaterUseNamingWhy() {
        Tensor t = Tensor.ones(1000);
        Storage storage = TensorInternals.storage(t);
        long frees = HostMemory.stats().frees();
        storage.release();
        storage.release();
        assertTrue(storage.isReleased());
        assertEquals(frees + 1, HostMemory.stats().frees(), "released once");
        IllegalStateException e = assertThrows(IllegalStateException.class, t::sum);
        assertTrue(e.getMessage().contains("released"), e.getMessage());
        // Wrapped memory is not the cache's: releasing it does nothing.
        Storage wrapped = Storage.wrap(MemorySegment.ofArray(new byte[16]));
        wrapped.release();
        assertFalse(wrapped.isReleased());
    }

    @Test
    void peakStatisticsRestartFromWhatIsAllocatedNow() {
        Tensor big = Tensor.zeros(DType.FLOAT32, 1 << 20);
        long peak = HostMemory.stats().peakAllocatedBytes();
        assertTrue(peak >= 4L << 20, "peak " + peak);
        TensorInternals.storage(big).release();
        HostMemory.resetPeakStats();
        MemoryStats s = HostMemory.stats();
        assertEquals(s.allocatedBytes(), s.peakAllocatedBytes());
    }

    /**
     * Threads allocate tensors of a few sizes, stamp each with its own number, keep a random set alive for random
     * lifetimes, drop or release the rest, and check every live tensor's stamp throughout: a block handed out
     * while it still backed a live tensor would overwrite one. Collections run meanwhile, so that dropped
     * storage comes back through its cleaner as well as through releases.
     */
    @Test
    void noBlockEverBacksTwoLiveTensorsUnderRandomLifetimesAcrossThreads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Long>> checks = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int worker = w;
                checks.add(pool.submit(() -> churn(worker)));
            }
            long checked = 0;
            for (Future<Long> f : checks) {
                checked += f.get(100, TimeUnit.SECONDS);
            }
            assertTrue(checked > 10_000, "checked " + checked + " live tensors");
        } finally {
            pool.shutdownNow();
        }
        MemoryStats s = HostMemory.stats();
        if (s.caching()) {
            assertTrue(s.cacheHits() > 0, "the churn reused blocks: " + s);
        }
    }

    private static long churn(int worker) {
        SplittableRandom random = new SplittableRandom(worker);
        int[] sizes = {16, 250, 1000, 4096, 70_000};
        List<Tensor> live = new ArrayList<>();
        List<Integer> stamps = new ArrayList<>();
        long checked = 0;
        for (int i = 0; i < 3000; i++) {
            Tensor t = Tensor.empty(DType.INT32, sizes[random.nextInt(sizes.length)]);
            int stamp = worker * 1_000_000 + i;
            t.filli(stamp);
            live.add(t);
            stamps.add(stamp);
            if (live.size() > 20 || random.nextInt(3) == 0) {
                int victim = random.nextInt(live.size());
                Tensor gone = live.remove(victim);
                stamps.remove(victim);
                if (random.nextBoolean()) {
                    TensorInternals.storage(gone).release();
                }
            }
            if (i % 500 == 0) {
                System.gc();
            }
            for (int k = 0; k < live.size(); k++) {
                Tensor l = live.get(k);
                int want = stamps.get(k);
                int n = l.numel();
                if (l.getDouble(0) != want || l.getDouble(n / 2) != want || l.getDouble(n - 1) != want) {
                    throw new AssertionError("a live tensor of worker " + worker + " lost its stamp " + want);
                }
                checked++;
            }
        }
        return checked;
    }

    @Test
    void uninitializedStorageReadsAsNaNWhenTheSuiteAsksForIt() {
        Assumptions.assumeTrue(CachingHostAllocator.FILL_UNINITIALIZED,
                "runs with -Dtensorbus.fillUninitializedMemory=true, as the core suite does");
        Tensor t = Tensor.uninitialized(DType.FLOAT32, 3, 5);
        for (float v : t.toFloatArray()) {
            assertTrue(Float.isNaN(v), "uninitialized float32 reads as NaN, got " + v);
        }
        assertEquals(-1, Tensor.uninitialized(DType.INT64, 2).toLongArray()[1]);
        assertEquals(0f, Tensor.zeros(3, 5).toFloatArray()[14], "zeroed storage stays zero");
    }
}
