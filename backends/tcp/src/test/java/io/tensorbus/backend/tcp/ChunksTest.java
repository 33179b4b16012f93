package io.tensorbus.backend.tcp;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Chunks}: the element-aligned cuts that rings and pipelines agree on across ranks. */
class ChunksTest {

    @Test
    void partsCoverTheRegionInOrderElementAlignedAndNearlyEqual() {
        for (int e : new int[] {1, 2, 4, 8}) {
            for (long n : new long[] {0, 1, 2, 3, 5, 7, 100, 1001}) {
                MemorySegment region = MemorySegment.ofArray(new byte[(int) (n * e)]);
                Region whole = Region.host(region);
                for (int parts : new int[] {1, 2, 3, 4, 7, 16}) {
                    long offset = 0;
                    long min = Long.MAX_VALUE;
                    long max = 0;
                    long previous = Long.MAX_VALUE;
                    for (int i = 0; i < parts; i++) {
                        MemorySegment p = Chunks.part(whole, e, parts, i).segment();
                        String what = "part " + i + " of " + parts + " of " + n + " elements of " + e + " bytes";
                        assertEquals(region.address() + offset, p.address(), what + " starts where the previous ended");
                        assertEquals(0, p.byteSize() % e, what + " holds whole elements");
                        assertTrue(p.byteSize() <= previous, what + ": larger parts come first");
                        previous = p.byteSize();
                        offset += p.byteSize();
                        min = Math.min(min, p.byteSize() / e);
                        max = Math.max(max, p.byteSize() / e);
                    }
                    assertEquals(n * e, offset, "the parts of " + n + " elements in " + parts + " cover the region");
                    assertTrue(max - min <= 1, "parts of " + n + " elements in " + parts + " differ by at most one");
                }
            }
        }
    }

    @Test
    void moreThanElementsGivesEmptyTrailingParts() {
        Region region = Region.host(MemorySegment.ofArray(new byte[3 * 4]));
        assertEquals(4, Chunks.part(region, 4, 5, 0).byteSize());
        assertEquals(4, Chunks.part(region, 4, 5, 2).byteSize());
        assertEquals(0, Chunks.part(region, 4, 5, 3).byteSize());
        assertEquals(0, Chunks.part(region, 4, 5, 4).byteSize());
    }

    @Test
    void countIsTheNumberOfChunksAtLeastOne() {
        assertEquals(1, Chunks.count(0, 1 << 20));
        assertEquals(1, Chunks.count(1, 1 << 20));
        assertEquals(1, Chunks.count(1 << 20, 1 << 20));
        assertEquals(2, Chunks.count((1 << 20) + 1, 1 << 20));
        assertEquals(64, Chunks.count(64L << 20, 1 << 20));
    }
}
