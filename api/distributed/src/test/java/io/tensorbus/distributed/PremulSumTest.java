package io.tensorbus.distributed;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ReduceOp.PREMUL_SUM} ({@code _make_nccl_premul_sum(factor)}) on every reducing collective, at world sizes
 * 2 and 3, and its bad inputs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PremulSumTest {

    /** Rank r holds {@code [r + 1, 2(r + 1)]}; a factor of 0.5 averages without a division after the sum. */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allReduceSumsEveryRanksTensorTimesTheFactor(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            Tensor t = Tensor.of(new float[] {r + 1, 2 * (r + 1)});
            pg.allReduce(t, ReduceOp.premulSum(1.0 / world)).await(10, TimeUnit.SECONDS);
            float mean = (world + 1) / 2f;
            assertArrayEquals(new float[] {mean, 2 * mean}, t.toFloatArray(), 1e-6f, "rank " + r);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void reduceScalesIntoTheDestinationAndLeavesTheOthersAlone(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            Tensor t = Tensor.of(new double[] {r + 1});
            pg.reduce(t, world - 1, ReduceOp.premulSum(2)).await(10, TimeUnit.SECONDS);
            double expected = r == world - 1 ? world * (world + 1.0) : r + 1;
            assertArrayEquals(new double[] {expected}, t.toDoubleArray(), 0, "rank " + r);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void reduceScatterVariantsScaleEveryBlockAndKeepTheInputs(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            List<Tensor> inputs = new ArrayList<>();
            float[] flat = new float[world];
            for (int d = 0; d < world; d++) {
                inputs.add(Tensor.of(new float[] {10 * d + r}));
                flat[d] = 10 * d + r;
            }
            Tensor stacked = Tensor.of(flat);
            float sumOfRanks = world * (world - 1) / 2f;
            float expected = -(10f * r * world + sumOfRanks);

            Tensor out = Tensor.zeros(DType.FLOAT32, 1);
            pg.reduceScatter(out, inputs, ReduceOp.premulSum(-1)).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {expected}, out.toFloatArray(), 0, "reduceScatter on rank " + r);
            assertArrayEquals(new float[] {r}, inputs.get(0).toFloatArray(), 0, "inputs untouched");

            Tensor out2 = Tensor.zeros(DType.FLOAT32, 1);
            pg.reduceScatterTensor(out2, stacked, ReduceOp.premulSum(-1)).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {expected}, out2.toFloatArray(), 0, "reduceScatterTensor on rank " + r);
            assertArrayEquals(flat, stacked.toFloatArray(), 0, "input untouched");
        });
    }

    @Test
    void badFactorsDtypesAndTheBareOpAreRefused() {
        Distributed.spawn(2, pg -> {
            var nan = assertThrows(IllegalArgumentException.class, () -> ReduceOp.premulSum(Double.NaN));
            assertTrue(nan.getMessage().contains("finite"), nan.getMessage());
            var ints = assertThrows(IllegalArgumentException.class,
                    () -> pg.allReduce(Tensor.zeros(DType.INT32, 2), ReduceOp.premulSum(2)));
            assertTrue(ints.getMessage().contains("int32"), ints.getMessage());
            var bare = assertThrows(IllegalArgumentException.class, () -> ReduceOp.of(ReduceOp.Type.PREMUL_SUM));
            assertTrue(bare.getMessage().contains("premulSum(factor)"), bare.getMessage());
            assertEquals(ReduceOp.premulSum(0.5), ReduceOp.premulSum(0.5), "a value: equal type and factor");
            assertEquals("PREMUL_SUM(0.5)", ReduceOp.premulSum(0.5).toString());
            assertThrows(IllegalArgumentException.class,
                    () -> pg.reduce(Tensor.zeros(DType.FLOAT32, 2), 2, ReduceOp.premulSum(2)));
            assertThrows(IllegalArgumentException.class, () -> pg.reduceScatter(Tensor.zeros(DType.FLOAT32, 2),
                    List.of(Tensor.zeros(DType.FLOAT32, 2)), ReduceOp.premulSum(2)));
            pg.barrier().await(10, TimeUnit.SECONDS);
        });
    }
}
