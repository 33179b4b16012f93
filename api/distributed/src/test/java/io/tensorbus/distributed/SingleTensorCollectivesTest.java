package io.tensorbus.distributed;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The single-tensor collectives, {@code reduce_scatter_tensor} and {@code all_to_all_single}, as PyTorch's
 * documentation shows them, at world sizes 2 and 3, and their bad inputs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SingleTensorCollectivesTest {

    private static long[] range(long from, int n) {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = from + i;
        }
        return v;
    }

    /** PyTorch's example: {@code arange(world * 2)} on every rank gives rank r {@code world * [2r, 2r + 1]}. */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void reduceScatterTensorSumsTheBlocksOfEveryRankAsInPyTorchsExample(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            long[] expected = {world * 2L * r, world * (2L * r + 1)};
            Tensor out = Tensor.zeros(DType.INT64, 2);
            pg.reduceScatterTensor(out, Tensor.of(range(0, world * 2))).await(10, TimeUnit.SECONDS);
            assertArrayEquals(expected, out.toLongArray(), "concatenated input on rank " + r);

            Tensor stacked = Tensor.of(range(0, world * 2), world, 2);
            Tensor max = Tensor.zeros(DType.INT64, 2);
            pg.reduceScatterTensor(max, stacked.mul(Tensor.scalar(r + 1, DType.INT64)), ReduceOp.MAX)
                    .await(10, TimeUnit.SECONDS);
            assertArrayEquals(new long[] {world * 2L * r, world * (2L * r + 1)}, max.toLongArray(),
                    "the largest factor is the world size, on rank " + r);
        });
    }

    /** PyTorch's even example: {@code arange(world) + rank * world} gives rank r {@code [r, world + r, ...]}. */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allToAllSingleWithEqualSplitsTransposesTheBlocks(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            Tensor out = Tensor.zeros(DType.INT64, world);
            pg.allToAllSingle(out, Tensor.of(range((long) r * world, world))).await(10, TimeUnit.SECONDS);
            long[] expected = new long[world];
            for (int s = 0; s < world; s++) {
                expected[s] = (long) s * world + r;
            }
            assertArrayEquals(expected, out.toLongArray(), "rank " + r);
        });
    }

    /**
     * PyTorch's uneven example, generalised: rank r sends {@code (r + d) % 3} rows of two values to rank d (some
     * blocks are empty), each value naming sender, receiver and position.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allToAllSingleWithUnevenSplitsCarriesRowsOfEveryShape(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            int[] inSplits = new int[world];
            int[] outSplits = new int[world];
            for (int p = 0; p < world; p++) {
                inSplits[p] = (r + p) % 3;
                outSplits[p] = (p + r) % 3;
            }
            Tensor in = Tensor.of(values(r, inSplits, true), sum(inSplits), 2);
            Tensor out = Tensor.full(-1, DType.INT64, sum(outSplits), 2);
            pg.allToAllSingle(out, in, outSplits, inSplits).await(10, TimeUnit.SECONDS);
            assertArrayEquals(values(r, outSplits, false), out.toLongArray(), "rank " + r);
        });
    }

    /** The values rank {@code self} sends ({@code sending}) or receives, block by block: 100 s + 10 d + i. */
    private static long[] values(int self, int[] splits, boolean sending) {
        long[] v = new long[2 * sum(splits)];
        int at = 0;
        for (int p = 0; p < splits.length; p++) {
            int from = sending ? self : p;
            int to = sending ? p : self;
            for (int i = 0; i < 2 * splits[p]; i++) {
                v[at++] = 100L * from + 10L * to + i;
            }
        }
        return v;
    }

    private static int sum(int[] splits) {
        int n = 0;
        for (int s : splits) {
            n += s;
        }
        return n;
    }

    @Test
    void badSizesSplitsAndDtypesAreRefusedNamingWhatIsAllowed() {
        Distributed.spawn(2, pg -> {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> pg.reduceScatterTensor(Tensor.zeros(2), Tensor.zeros(5)));
            assertTrue(e.getMessage().contains("4 elements (size() x output.numel())"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.reduceScatterTensor(Tensor.zeros(2), Tensor.zeros(DType.INT64, 4)));
            assertTrue(e.getMessage().contains("must be float32"), e.getMessage());

            Tensor four = Tensor.zeros(4);
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(four, four, new int[] {1, 2}, new int[] {2, 2}));
            assertTrue(e.getMessage().contains("outputSplitSizes [1, 2] must hold 2 counts of at least 0 that add up"
                    + " to the first dimension, 4"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(four, four, null, new int[] {5, -1}));
            assertTrue(e.getMessage().contains("inputSplitSizes [5, -1]"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(four, four, null, new int[] {4}));
            assertTrue(e.getMessage().contains("must hold 2 counts"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> pg.allToAllSingle(Tensor.zeros(3), Tensor.zeros(3)));
            assertTrue(e.getMessage().contains("does not divide into 2 equal blocks: give inputSplitSizes"),
                    e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(Tensor.zeros(2, 3), Tensor.zeros(2, 2)));
            assertTrue(e.getMessage().contains("rows of one shape"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(Tensor.zeros(DType.INT64, 4), four));
            assertTrue(e.getMessage().contains("one dtype"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allToAllSingle(Tensor.scalar(1), Tensor.scalar(1)));
            assertTrue(e.getMessage().contains("scalar"), e.getMessage());
        });
    }

    /** An output block smaller than what its sender sends fails the operation on the receiver, it does not hang. */
    @Test
    void anOutputBlockThatDoesNotFitWhatItsSenderSendsFailsTheOperation() {
        Distributed.spawn(2, pg -> {
            int r = pg.rank();
            // Rank 0 sends 3 rows to rank 1, which expects 2 from it (its own split says 1 + 2 = 3 in all).
            int[] inSplits = r == 0 ? new int[] {1, 3} : new int[] {1, 1};
            int[] outSplits = r == 0 ? new int[] {1, 1} : new int[] {2, 1};
            Tensor in = Tensor.zeros(sum(inSplits));
            Tensor out = Tensor.zeros(sum(outSplits));
            var f = pg.allToAllSingle(out, in, outSplits, inSplits);
            if (r == 1) {
                Exception e = assertThrows(Exception.class, () -> f.await(30, TimeUnit.SECONDS));
                assertTrue(String.valueOf(e.getMessage()).contains("bytes"), String.valueOf(e.getMessage()));
            } else {
                try {
                    f.await(30, TimeUnit.SECONDS);
                } catch (Exception expected) {
                    // Rank 0 may see the group fail as well.
                }
            }
        });
    }
}
