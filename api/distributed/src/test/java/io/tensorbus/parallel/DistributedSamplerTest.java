package io.tensorbus.parallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.data.Batch;
import io.tensorbus.data.DataLoader;
import io.tensorbus.data.TensorDataset;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link DistributedSampler} against PyTorch's {@code DistributedSampler} semantics. */
class DistributedSamplerTest {
    private static int[] indices(int n, int replicas, int rank, boolean shuffle, long seed, boolean dropLast,
                                 int epoch) {
        DistributedSampler s = new DistributedSampler(n, replicas, rank, shuffle, seed, dropLast);
        s.setEpoch(epoch);
        return s.toArray();
    }

    @Test
    void tenItemsOnThreeReplicasPadLikePyTorch() {
        // torch DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)
        assertArrayEquals(new int[] {0, 3, 6, 9}, indices(10, 3, 0, false, 0, false, 0));
        assertArrayEquals(new int[] {1, 4, 7, 0}, indices(10, 3, 1, false, 0, false, 0));
        assertArrayEquals(new int[] {2, 5, 8, 1}, indices(10, 3, 2, false, 0, false, 0));
        DistributedSampler s = new DistributedSampler(10, 3, 0, false, 0, false);
        assertEquals(4, s.size());
        assertEquals(12, s.totalSize());
    }

    @Test
    void paddingLongerThanTheDatasetRepeatsItCyclically() {
        // torch: 2 items on 5 replicas: indices [0, 1] + ([0, 1] * 2)[:3] = [0, 1, 0, 1, 0]
        int[][] expected = {{0}, {1}, {0}, {1}, {0}};
        for (int r = 0; r < 5; r++) {
            assertArrayEquals(expected[r], indices(2, 5, r, false, 0, false, 0), "rank " + r);
        }
        // 1 item on 4 replicas: every rank gets item 0.
        for (int r = 0; r < 4; r++) {
            assertArrayEquals(new int[] {0}, indices(1, 4, r, false, 0, false, 0), "rank " + r);
        }
    }

    @ParameterizedTest
    @CsvSource({"10,3", "11,4", "7,7", "100,8", "5,2", "1,1", "64,4"})
    void ranksCoverTheDatasetAndOnlyPaddingRepeats(int n, int replicas) {
        for (boolean shuffle : new boolean[] {false, true}) {
            int[] seen = new int[n];
            int total = 0;
            for (int r = 0; r < replicas; r++) {
                int[] mine = indices(n, replicas, r, shuffle, 17, false, 3);
                assertEquals((n + replicas - 1) / replicas, mine.length);
                for (int i : mine) {
                    seen[i]++;
                }
                total += mine.length;
            }
            int padding = total - n;
            assertEquals(0, total % replicas);
            assertTrue(padding < replicas, "padding " + padding);
            int repeated = 0;
            for (int count : seen) {
                assertTrue(count >= 1, "every item is visited: " + Arrays.toString(seen));
                repeated += count - 1;
            }
            assertEquals(padding, repeated, "exactly the padding repeats");
        }
    }

    @ParameterizedTest
    @CsvSource({"10,3,3", "11,4,2", "12,4,3", "2,3,0", "0,2,0", "100,8,12"})
    void dropLastCutsTheTailSoRanksAreDisjoint(int n, int replicas, int perRank) {
        boolean[] seen = new boolean[n];
        for (int r = 0; r < replicas; r++) {
            DistributedSampler s = new DistributedSampler(n, replicas, r, true, 5, true);
            assertEquals(perRank, s.size());
            assertEquals(perRank * replicas, s.totalSize());
            for (int i : s.toArray()) {
                assertFalse(seen[i], "index " + i + " visited twice");
                seen[i] = true;
            }
        }
        // Without shuffle the cut is the tail: the first perRank * replicas items are visited.
        List<Integer> visited = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            for (int i : indices(n, replicas, r, false, 0, true, 0)) {
                visited.add(i);
            }
        }
        visited.sort(null);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < perRank * replicas; i++) {
            expected.add(i);
        }
        assertEquals(expected, visited);
    }

    @Test
    void withoutPaddingDropLastAndKeepingAgree() {
        // 12 items on 4 replicas divide evenly: dropLast changes nothing.
        for (int r = 0; r < 4; r++) {
            assertArrayEquals(indices(12, 4, r, true, 9, false, 2), indices(12, 4, r, true, 9, true, 2));
        }
    }

    @Test
    void shuffleIsSeedPlusEpochAndSharedAcrossRanks() {
        int[] e0 = indices(50, 2, 0, true, 42, false, 0);
        int[] e1 = indices(50, 2, 0, true, 42, false, 1);
        assertFalse(Arrays.equals(e0, e1), "different epochs give different orders");
        assertArrayEquals(e1, indices(50, 2, 0, true, 42, false, 1), "same epoch, same order");
        assertFalse(Arrays.equals(e0, indices(50, 2, 0, true, 43, false, 0)), "another seed, another order");
        // seed + epoch is what matters, as PyTorch's g.manual_seed(seed + epoch).
        assertArrayEquals(e1, indices(50, 2, 0, true, 43, false, 0));
        // Every rank slices the same permutation of the whole dataset: rank r's i-th is perm[r + 2 i].
        long[] perm = Tensor.randperm(new Generator(42 + 1), 50).toLongArray();
        for (int r = 0; r < 2; r++) {
            int[] mine = indices(50, 2, r, true, 42, false, 1);
            for (int i = 0; i < mine.length; i++) {
                assertEquals(perm[r + 2 * i], mine[i]);
            }
        }
    }

    @Test
    void setEpochChangesTheOrderOfTheSameSampler() {
        DistributedSampler s = new DistributedSampler(30, 3, 1);
        assertEquals(0, s.epoch());
        int[] a = s.toArray();
        s.setEpoch(4);
        assertEquals(4, s.epoch());
        int[] b = s.toArray();
        assertFalse(Arrays.equals(a, b));
        s.setEpoch(0);
        assertArrayEquals(a, s.toArray());
        List<Integer> iterated = new ArrayList<>();
        s.forEach(iterated::add);
        assertEquals(Arrays.stream(a).boxed().toList(), iterated);
        assertThrows(IllegalArgumentException.class, () -> s.setEpoch(-1));
    }

    @Test
    void defaultsAreThoseOfPyTorch() {
        DistributedSampler s = DistributedSampler.builder(10).numReplicas(2).rank(1).build();
        assertTrue(s.shuffle());
        assertEquals(0, s.seed());
        assertFalse(s.dropLast());
        assertEquals(2, s.numReplicas());
        assertEquals(1, s.rank());
        assertEquals(10, s.datasetSize());
        DistributedSampler c = new DistributedSampler(10, 2, 1);
        assertArrayEquals(c.toArray(), s.toArray());
    }

    @Test
    void badArgumentsSayWhatIsAllowed() {
        assertMessage(() -> new DistributedSampler(10, 3, 3), "rank=3", "[0, 3)");
        assertMessage(() -> new DistributedSampler(10, 3, -1), "rank=-1", "[0, 3)");
        assertMessage(() -> new DistributedSampler(10, 0, 0), "numReplicas=0", ">= 1");
        assertMessage(() -> new DistributedSampler(-1, 2, 0), "datasetSize=-1", ">= 0");
        assertMessage(() -> DistributedSampler.builder(-5), "datasetSize=-5", ">= 0");
        assertMessage(() -> DistributedSampler.builder(10).rank(0).build(), "numReplicas", "group");
        assertMessage(() -> DistributedSampler.builder(10).numReplicas(2).build(), "rank", "group");
        assertMessage(() -> DistributedSampler.builder(10).numReplicas(2).rank(2).build(), "rank=2", "[0, 2)");
        assertMessage(() -> new DistributedSampler(Integer.MAX_VALUE, 2, 0), "padded", "at most");
        assertThrows(NullPointerException.class, () -> DistributedSampler.builder((TensorDataset) null));
        assertThrows(NullPointerException.class, () -> DistributedSampler.of(dataset(4), null));
    }

    private static void assertMessage(Executable call, String... parts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), e.getMessage());
        }
    }

    private static TensorDataset dataset(int n) {
        return new TensorDataset(Tensor.arange(n).to(DType.FLOAT32).reshape(n, 1), Tensor.arange(n));
    }

    @Test
    void dataLoaderBatchesTheSamplerOrderAndForwardsItsEpoch() {
        TensorDataset ds = dataset(20);
        DistributedSampler sampler = DistributedSampler.builder(ds).numReplicas(2).rank(1).seed(3).build();
        DataLoader<List<Tensor>> loader = DataLoader.builder(ds).sampler(sampler).batchSize(4).prefetch(0).build();
        assertSame(sampler, loader.sampler());
        assertEquals(3, loader.size(), "10 indices in batches of 4");
        loader.setEpoch(5);
        List<Long> targets = targets(loader);
        assertEquals(5, sampler.epoch(), "the loader's setEpoch reached the sampler");
        assertEquals(Arrays.stream(sampler.toArray()).asLongStream().boxed().toList(), targets);
        // The next iteration is epoch 6, with another order.
        List<Long> next = targets(loader);
        assertEquals(6, sampler.epoch());
        assertFalse(targets.equals(next));
        assertThrows(IllegalArgumentException.class,
                () -> DataLoader.builder(ds).sampler(sampler).shuffle(true).build());
    }

    private static List<Long> targets(DataLoader<List<Tensor>> loader) {
        List<Long> out = new ArrayList<>();
        for (Batch b : loader) {
            for (long t : b.targets().toLongArray()) {
                out.add(t);
            }
        }
        return out;
    }

    @Test
    void ofTakesRankAndSizeFromTheGroup() {
        Map<Integer, int[]> byRank = new ConcurrentHashMap<>();
        Distributed.spawn(3, pg -> {
            DistributedSampler s = DistributedSampler.of(dataset(10), pg);
            assertEquals(3, s.numReplicas());
            assertEquals(pg.rank(), s.rank());
            assertTrue(s.shuffle());
            s.setEpoch(2);
            byRank.put(pg.rank(), s.toArray());
        });
        int[] seen = new int[10];
        for (int r = 0; r < 3; r++) {
            assertArrayEquals(indices(10, 3, r, true, 0, false, 2), byRank.get(r));
            for (int i : byRank.get(r)) {
                seen[i]++;
            }
        }
        assertTrue(Arrays.stream(seen).allMatch(c -> c >= 1), Arrays.toString(seen));
    }
}
