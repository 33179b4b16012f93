package io.tensorbus.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SamplerTest {
    @Test
    void sequentialYieldsEveryIndexInOrder() {
        List<Integer> seen = new ArrayList<>();
        for (int i : new SequentialSampler(4)) {
            seen.add(i);
        }
        assertEquals(List.of(0, 1, 2, 3), seen);
        assertArrayEquals(new int[0], new SequentialSampler(0).toArray());
        assertThrows(IllegalArgumentException.class, () -> new SequentialSampler(-1));
    }

    @Test
    void randomEpochZeroIsRandpermOfTheSeed() {
        long[] perm = Tensor.randperm(new Generator(42), 50).toLongArray();
        int[] expected = Arrays.stream(perm).mapToInt(v -> (int) v).toArray();
        assertArrayEquals(expected, new RandomSampler(50, 42).toArray());
    }

    @Test
    void randomIsAPermutationPerEpochReproducibleAndDifferent() {
        RandomSampler s = new RandomSampler(100, 7);
        int[] e0 = s.toArray();
        s.setEpoch(1);
        int[] e1 = s.toArray();
        assertFalse(Arrays.equals(e0, e1));
        int[] sorted = e1.clone();
        Arrays.sort(sorted);
        assertArrayEquals(new SequentialSampler(100).toArray(), sorted);
        RandomSampler again = new RandomSampler(100, 7);
        again.setEpoch(1);
        assertArrayEquals(e1, again.toArray());
        assertThrows(IllegalArgumentException.class, () -> s.setEpoch(-1));
    }

    @Test
    void batchSamplerSplitsAndDropsTheLastWhenAsked() {
        BatchSampler keep = new BatchSampler(new SequentialSampler(10), 4, false);
        assertEquals(3, keep.size());
        List<int[]> b = keep.batches();
        assertArrayEquals(new int[] {8, 9}, b.get(2));
        BatchSampler drop = new BatchSampler(new SequentialSampler(10), 4, true);
        assertEquals(2, drop.size());
        assertEquals(2, drop.batches().size());
        assertThrows(IllegalArgumentException.class, () -> new BatchSampler(new SequentialSampler(1), 0, false));
    }
}
