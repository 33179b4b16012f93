package io.tensorbus.backend.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StagingPoolTest {
    @Test
    void aBufferGivenBackServesTheNextRequestOfAboutItsSize() {
        StagingPool pool = new StagingPool();
        MemorySegment a = pool.take(300_000);
        assertEquals(300_000, a.byteSize());
        assertEquals(0, a.address() % 4096, "page-aligned");
        pool.give(a);
        MemorySegment b = pool.take(200_000);
        assertEquals(a.address(), b.address(), "the free buffer is at most twice the request: reused");
        assertEquals(200_000, b.byteSize());
        pool.give(b);
        MemorySegment c = pool.take(320_000);
        assertEquals(a.address(), c.address(), "fresh buffers are rounded up (to 327,680 bytes here)");
    }

    @Test
    void aRequestDoesNotTakeABufferOverTwiceItsSize() {
        StagingPool pool = new StagingPool();
        MemorySegment big = pool.take(1 << 20);
        pool.give(big);
        MemorySegment small = pool.take(100_000);
        assertNotEquals(big.address(), small.address());
        assertEquals(1 << 20, pool.pooledBytes(), "the large buffer waits for a request its size");
    }

    @Test
    void thePoolKeepsNoMoreThanWasEverTakenAtOnce() {
        StagingPool pool = new StagingPool();
        for (int size = 100_000; size < 2_000_000; size += 150_000) {
            // One buffer at a time, of ever new sizes: keeping each would only grow the footprint.
            pool.give(pool.take(size));
            long peak = StagingPool.sizeClass(size);
            assertTrue(pool.pooledBytes() <= peak, pool.pooledBytes() + " pooled, one buffer of " + peak + " taken");
        }
        MemorySegment x = pool.take(1_000_000);
        MemorySegment y = pool.take(1_000_000);
        pool.give(x);
        pool.give(y);
        assertEquals(2 * StagingPool.sizeClass(1_000_000), pool.pooledBytes(), "two were taken at once");
    }

    @Test
    void sizeClassesWasteAtMostAFifth() {
        assertEquals(4096, StagingPool.sizeClass(1));
        assertEquals(4096, StagingPool.sizeClass(4096));
        assertEquals(5120, StagingPool.sizeClass(4097));
        assertEquals(1 << 20, StagingPool.sizeClass(1 << 20));
        assertEquals(1_310_720, StagingPool.sizeClass((1 << 20) + 1));
        for (long n = 4097; n < 100_000_000; n = n * 7 / 5 + 13) {
            long c = StagingPool.sizeClass(n);
            assertTrue(c >= n && (c - n) * 5 <= c, n + " -> " + c);
        }
    }

    @Test
    void onlyItsOwnBuffersGoBackAndOnlyOnce() {
        StagingPool pool = new StagingPool();
        MemorySegment mine = pool.take(70_000);
        pool.give(mine);
        assertThrows(IllegalArgumentException.class, () -> pool.give(mine));
        MemorySegment other = Arena.ofAuto().allocate(70_000, 4096);
        assertThrows(IllegalArgumentException.class, () -> pool.give(other));
    }
}
