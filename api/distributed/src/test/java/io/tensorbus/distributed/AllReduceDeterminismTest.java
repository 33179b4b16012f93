package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tcp backend's all-reduce sums in an order fixed by the algorithm (chosen by size and world size), not by
 * which message arrives first: three ranks get the same bits as each other and from run to run.
 */
class AllReduceDeterminismTest {
    private static int[] bits(Tensor t) {
        float[] v = t.toFloatArray();
        int[] b = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = Float.floatToRawIntBits(v[i]);
        }
        return b;
    }

    /** One 3-rank SUM all-reduce of seeded random tensors of {@code n} floats: each rank's result. */
    private static int[][] allReduce(int n) {
        int[][] out = new int[3][];
        Distributed.spawn(3, pg -> {
            Tensor t = Tensor.randn(new Generator(100 + pg.rank()), DType.FLOAT32, n);
            pg.allReduce(t, ReduceOp.SUM).await();
            out[pg.rank()] = bits(t);
        });
        return out;
    }

    @ParameterizedTest(name = "{0} floats")
    @ValueSource(ints = {1000, 1 << 20})
    void aThreeRankAllReduceGivesTheSameBitsOnEveryRankAndInEveryRun(int n) {
        int[][] first = allReduce(n);
        for (int run = 0; run < 3; run++) {
            int[][] again = allReduce(n);
            for (int r = 0; r < 3; r++) {
                assertArrayEquals(first[0], first[r], "rank " + r + " differs from rank 0");
                assertArrayEquals(first[r], again[r], "rank " + r + " differs from the first run in run " + run);
            }
        }
    }
}
