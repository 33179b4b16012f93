package io.tensorbus.distributed.optim;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ZeroRedundancyOptimizer against a plain optimizer over the whole model: the same parameters after every step,
 * the same state dict once consolidated, and about 1/world of the state on each rank.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroRedundancyOptimizerTest {
    private static final int[][] SHAPES = {{7, 5}, {5}, {3, 4}, {12}, {1}, {2, 2, 2}};

    private static List<Tensor> model(long seed) {
        Generator g = new Generator(seed);
        List<Tensor> params = new ArrayList<>();
        for (int[] shape : SHAPES) {
            params.add(Tensor.randn(g, DType.FLOAT32, shape).requiresGrad(true));
        }
        return params;
    }

    private static List<Tensor> copy(List<Tensor> params) {
        return params.stream().map(p -> p.detach().clone().requiresGrad(true)).toList();
    }

    /** Equal gradients on every rank, as DDP leaves them; different at every step. */
    private static void setGradients(List<Tensor> params, int step) {
        Generator g = new Generator(1000L + step);
        for (Tensor p : params) {
            p.setGrad(Tensor.randn(g, DType.FLOAT32, p.shape()));
        }
    }

    private static OptimizerSpec spec(String optimizer) {
        return optimizer.equals("SGD") ? OptimizerSpec.sgd(0.1).with("momentum", 0.9) : OptimizerSpec.adam(0.01);
    }

    private static void assertSameParameters(List<Tensor> expected, List<Tensor> actual, String what) {
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i).toFloatArray(), actual.get(i).toFloatArray(), 0f, what + ", parameter "
                    + i);
        }
    }

    private static long stateBytes(Optimizer optimizer, List<Tensor> params) {
        long bytes = 0;
        for (Tensor p : params) {
            for (Tensor t : optimizer.state(p).values()) {
                bytes += (long) t.numel() * t.dtype().byteSize();
            }
        }
        return bytes;
    }

    @ParameterizedTest
    @CsvSource({"2, SGD, false", "3, SGD, true", "2, Adam, true", "3, Adam, false"})
    void parametersAfterEveryStepEqualAPlainOptimizersOnTheWholeModel(int world, String optimizer, boolean bucketView) {
        Distributed.spawn(world, pg -> {
            List<Tensor> params = model(7);
            List<Tensor> reference = copy(params);
            Optimizer plain = spec(optimizer).build(reference);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(spec(optimizer)).group(pg)
                    .parametersAsBucketView(bucketView).build(params);
            for (int step = 0; step < 5; step++) {
                setGradients(params, step);
                setGradients(reference, step);
                zero.step();
                plain.step();
                assertSameParameters(reference, params, "rank " + pg.rank() + " after step " + step);
                zero.zeroGrad();
            }
            assertEquals(0f, params.getFirst().grad().abs().sum().item(), "zeroGrad clears every gradient");
            long mine = stateBytes(zero.optim(), params);
            long whole = stateBytes(plain, reference);
            long largest = stateBytes(plain, List.of(reference.getFirst()));
            assertTrue(mine > 0 && mine <= whole / world + largest, "rank " + pg.rank() + " holds " + mine
                    + " bytes of state, the plain optimizer " + whole);
        });
    }

    @Test
    void everyRankOwnsAShareAndTheLargestParameterGoesToRankZero() {
        Distributed.spawn(3, pg -> {
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1)).group(pg)
                    .build(model(1));
            // 35 -> 0, 12 -> 1, 12 -> 2, 8 -> 1, 5 -> 2, 1 -> 2 (PyTorch's greedy order).
            assertEquals(List.of(35), zero.parametersOf(0).stream().map(Tensor::numel).toList());
            assertEquals(List.of(12, 8), zero.parametersOf(1).stream().map(Tensor::numel).toList());
            assertEquals(List.of(5, 12, 1), zero.parametersOf(2).stream().map(Tensor::numel).toList());
        });
    }

    @ParameterizedTest
    @CsvSource({"2, SGD", "3, Adam"})
    void aConsolidatedStateDictEqualsThePlainOnesAndLoadsBackIntoShards(int world, String optimizer) {
        Distributed.spawn(world, pg -> {
            List<Tensor> params = model(3);
            List<Tensor> reference = copy(params);
            Optimizer plain = spec(optimizer).build(reference);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(spec(optimizer)).group(pg).build(params);
            for (int step = 0; step < 3; step++) {
                setGradients(params, step);
                setGradients(reference, step);
                zero.step();
                plain.step();
            }
            int to = world - 1;
            zero.consolidateStateDict(to);
            if (pg.rank() == to) {
                OptimizerState full = zero.stateDict();
                OptimizerState expected = plain.stateDict();
                assertEquals(expected.paramGroups(), full.paramGroups());
                assertEquals(expected.state().keySet(), full.state().keySet());
                for (Map.Entry<Integer, Map<String, Tensor>> e : expected.state().entrySet()) {
                    for (Map.Entry<String, Tensor> s : e.getValue().entrySet()) {
                        assertArrayEquals(s.getValue().toFloatArray(),
                                full.state().get(e.getKey()).get(s.getKey()).toFloatArray(), 0f,
                                "state." + e.getKey() + "." + s.getKey());
                    }
                }
            } else {
                var e = assertThrows(IllegalStateException.class, zero::stateDict);
                assertTrue(e.getMessage().contains("consolidateStateDict"), e.getMessage());
            }

            // A new ZeRO over copies of the parameters loads the plain state and goes on as the plain one does.
            List<Tensor> resumed = copy(params);
            ZeroRedundancyOptimizer again = ZeroRedundancyOptimizer.builder(spec(optimizer)).group(pg).build(resumed);
            again.loadStateDict(plain.stateDict());
            for (int step = 3; step < 5; step++) {
                setGradients(resumed, step);
                setGradients(reference, step);
                again.step();
                plain.step();
            }
            assertSameParameters(reference, resumed, "rank " + pg.rank() + " after resuming");
        });
    }

    @Test
    void optionsChangedOnTheParamGroupsReachTheLocalOptimizer() {
        Distributed.spawn(2, pg -> {
            List<Tensor> params = model(5);
            List<Tensor> reference = copy(params);
            Optimizer plain = OptimizerSpec.sgd(0.1).build(reference);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1)).group(pg)
                    .build(params);
            zero.paramGroups().getFirst().set("lr", 0.5);
            plain.paramGroups().getFirst().set("lr", 0.5);
            setGradients(params, 0);
            setGradients(reference, 0);
            zero.step();
            plain.step();
            assertSameParameters(reference, params, "rank " + pg.rank());
        });
    }

    @Test
    void badInputsAreRefusedWithWhatIsAllowed() {
        Distributed.spawn(2, pg -> {
            var builder = ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1)).group(pg);
            var empty = assertThrows(IllegalArgumentException.class, () -> builder.build(List.of()));
            assertTrue(empty.getMessage().contains("empty parameter list"), empty.getMessage());
            assertThrows(IllegalArgumentException.class, () -> ZeroRedundancyOptimizer
                    .builder(OptimizerSpec.sgd(0.1).with("momentum", -1.0)).group(pg).build(model(1)));
            ZeroRedundancyOptimizer zero = builder.build(model(1));
            assertThrows(IllegalArgumentException.class, () -> zero.parametersOf(2));
            assertThrows(IllegalArgumentException.class, () -> zero.ownerOf(Tensor.zeros(1)));
            var outsider = assertThrows(IllegalArgumentException.class, () -> zero.consolidateStateDict(5));
            assertTrue(outsider.getMessage().contains("not a member"), outsider.getMessage());
            assertFalse(zero.parametersAsBucketView());
            pg.barrier().await(10, TimeUnit.SECONDS);
        });
    }
}
