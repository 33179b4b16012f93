package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.data.Dataset;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DataPartitionerTest {
    /** Item i is i. */
    private static final class Numbers implements Dataset<Integer> {
        private final int size;

        Numbers(int size) {
            this.size = size;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public Integer get(int index) {
            return index;
        }
    }

    @Test
    void theTutorialsDefaultsCutSeventyTwentyTen() {
        DataPartitioner<Integer> p = new DataPartitioner<>(new Numbers(100));
        assertEquals(3, p.partitions());
        assertEquals(70, p.use(0).size());
        assertEquals(20, p.use(1).size());
        assertEquals(10, p.use(2).size());
        Set<Integer> seen = new HashSet<>();
        for (int k = 0; k < 3; k++) {
            DataPartitioner.Partition<Integer> part = p.use(k);
            for (int i = 0; i < part.size(); i++) {
                assertTrue(seen.add(part.get(i)), "item " + part.get(i) + " is in two partitions");
            }
        }
        assertEquals(100, seen.size());
    }

    @Test
    void theSameSeedGivesTheSameCutOnEveryProcess() {
        double[] halves = DataPartitioner.evenSizes(2);
        DataPartitioner<Integer> a = new DataPartitioner<>(new Numbers(1000), halves, 1234);
        DataPartitioner<Integer> b = new DataPartitioner<>(new Numbers(1000), halves, 1234);
        DataPartitioner<Integer> c = new DataPartitioner<>(new Numbers(1000), halves, 99);
        assertArrayEquals(a.use(1).indices(), b.use(1).indices());
        assertFalse(Arrays.equals(a.use(1).indices(), c.use(1).indices()));
        assertFalse(Arrays.equals(a.use(0).indices(), sorted(a.use(0).indices())), "not shuffled");
    }

    @Test
    void badSizesAndPartitionsAreRefused() {
        Numbers data = new Numbers(10);
        assertThrows(IllegalArgumentException.class, () -> new DataPartitioner<>(data, new double[0], 1));
        assertThrows(IllegalArgumentException.class, () -> new DataPartitioner<>(data, new double[] {0.6, 0.6}, 1));
        assertThrows(IllegalArgumentException.class, () -> new DataPartitioner<>(data, new double[] {-0.1}, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DataPartitioner<>(data).use(3));
        assertTrue(e.getMessage().contains("partition=3"), e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> new DataPartitioner<>(data).use(2).get(1));
    }

    private static int[] sorted(int[] a) {
        int[] s = a.clone();
        Arrays.sort(s);
        return s;
    }
}
