package io.tensorbus.distributed.optim;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Reduction;
import io.tensorbus.nn.Sequential;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.distributed.algorithms.CommHooks;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.distributed.algorithms.Join;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ZeroRedundancyOptimizer under DistributedDataParallel, stepping after the backward pass and overlapped with it
 * ({@code overlapWithDdp}): the same model after every step as DDP with a plain optimizer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroWithDdpTest {
    private static final int STEPS = 4;

    private static Module model() {
        Generator g = new Generator(11);
        return new Sequential(new Linear(8, 16, true, g), new ReLU(), new Linear(16, 12, true, g), new ReLU(),
                new Linear(12, 4, true, g));
    }

    private static DistributedDataParallel ddp(ProcessGroup pg) {
        // Small buckets: several per pass, so steps overlap later buckets' all-reduces.
        return DistributedDataParallel.builder(model(), pg).bucketCapMb(0.0005).build();
    }

    /** One training step on this rank's own data, different on every rank and step. */
    private static void backward(DistributedDataParallel ddp, int rank, int step) {
        rankLoss(ddp, rank, step).backward();
    }

    /** The loss of {@code model} on rank {@code rank}'s data of step {@code step}. */
    private static Tensor rankLoss(Module model, int rank, int step) {
        Generator g = new Generator(100L * rank + step);
        Tensor x = Tensor.randn(g, DType.FLOAT32, 5, 8);
        Tensor y = Tensor.randn(g, DType.FLOAT32, 5, 4);
        return Functional.mseLoss(model.forward(x), y, Reduction.MEAN);
    }

    private static OptimizerSpec spec(String optimizer) {
        return optimizer.equals("SGD") ? OptimizerSpec.sgd(0.05).with("momentum", 0.9) : OptimizerSpec.adam(0.01);
    }

    @ParameterizedTest(name = "{0} ranks, {1}, overlap {2}")
    @CsvSource({"2, SGD, false", "2, Adam, true", "3, SGD, true", "3, Adam, false"})
    void zeroUnderDdpTrainsAsAPlainOptimizerDoes(int world, String optimizer, boolean overlap) {
        Distributed.spawn(world, pg -> {
            DistributedDataParallel plainDdp = ddp(pg);
            Optimizer plain = spec(optimizer).build(plainDdp.parameters());
            DistributedDataParallel zeroDdp = ddp(pg);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(spec(optimizer)).group(pg)
                    .overlapWithDdp(overlap).build(zeroDdp.parameters());
            if (overlap) {
                zeroDdp.registerCommHook(zero.hookWithZeroStep(CommHooks.allReduce()));
            }
            for (int step = 0; step < STEPS; step++) {
                backward(plainDdp, pg.rank(), step);
                plain.step();
                plain.zeroGrad();
                backward(zeroDdp, pg.rank(), step);
                zero.step();
                zero.zeroGrad();
                List<Tensor> expected = plainDdp.parameters();
                List<Tensor> actual = zeroDdp.parameters();
                for (int i = 0; i < expected.size(); i++) {
                    assertArrayEquals(expected.get(i).toFloatArray(), actual.get(i).toFloatArray(), 0f,
                            "rank " + pg.rank() + ", step " + step + ", parameter " + i);
                }
            }
            plainDdp.close();
            zeroDdp.close();
        });
    }

    /**
     * Uneven inputs: rank 0 has 2 batches, rank 1 has 4. In {@code Join.of(ddp, zero)} the joined rank keeps stepping
     * its shard with the averaged gradients DDP's join hook brings back, so every rank ends with the model of one
     * process training on what the ranks had (averages divide by the world size, as DDP's do).
     */
    @ParameterizedTest(name = "world {0}, overlap {1}")
    @CsvSource({"2, false", "2, true", "3, false", "3, true"})
    void aJoinedRankKeepsSteppingItsShard(int world, boolean overlap) {
        int[] steps = {2, 4, 3};
        Module reference = model();
        Optimizer refOpt = spec("SGD").build(reference.parameters());
        for (int step = 0; step < 4; step++) {
            refOpt.zeroGrad();
            Tensor loss = null;
            for (int r = 0; r < world; r++) {
                if (step < steps[r]) {
                    loss = loss == null ? rankLoss(reference, r, step) : loss.add(rankLoss(reference, r, step));
                }
            }
            loss.div(world).backward();
            refOpt.step();
        }
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(world, pg -> {
            DistributedDataParallel ddp = ddp(pg);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(spec("SGD")).group(pg)
                    .overlapWithDdp(overlap).build(ddp.parameters());
            if (overlap) {
                ddp.registerCommHook(zero.hookWithZeroStep(CommHooks.allReduce()));
            }
            try (Join ignored = Join.of(ddp, zero)) {
                for (int step = 0; step < steps[pg.rank()]; step++) {
                    zero.zeroGrad();
                    rankLoss(ddp, pg.rank(), step).backward();
                    zero.step();
                }
            }
            got.put(pg.rank(), ddp.parameters().stream().map(p -> p.detach().clone()).toList());
        });
        List<Tensor> expected = reference.parameters();
        for (int r = 0; r < world; r++) {
            for (int i = 0; i < expected.size(); i++) {
                assertArrayEquals(expected.get(i).toFloatArray(), got.get(r).get(i).toFloatArray(), 2e-6f,
                        "rank " + r + ", parameter " + i);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void throwOnEarlyTerminationStopsEveryRank(int world) {
        Map<Integer, String> errors = new ConcurrentHashMap<>();
        Distributed.spawn(world, pg -> {
            DistributedDataParallel ddp = ddp(pg);
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(spec("SGD")).group(pg)
                    .build(ddp.parameters());
            var e = assertThrows(IllegalStateException.class, () -> {
                try (Join ignored = Join.of(List.of(ddp, zero), true)) {
                    for (int step = 0; step < (pg.rank() == 0 ? 1 : 3); step++) {
                        zero.zeroGrad();
                        rankLoss(ddp, pg.rank(), step).backward();
                        zero.step();
                    }
                }
            });
            errors.put(pg.rank(), e.getMessage());
        });
        assertTrue(errors.get(0).contains("ran out of inputs"), errors.get(0));
        for (int r = 1; r < world; r++) {
            assertTrue(errors.get(r).contains("a rank ran out of inputs"), errors.get(r));
        }
    }

    @Test
    void theOverlapHookNeedsAnOptimizerBuiltForIt() {
        Distributed.spawn(2, pg -> {
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1)).group(pg)
                    .build(model().parameters());
            var e = assertThrows(IllegalStateException.class, () -> zero.hookWithZeroStep(CommHooks.allReduce()));
            assertTrue(e.getMessage().contains("overlapWithDdp(true)"), e.getMessage());
            assertThrows(NullPointerException.class, () -> ZeroRedundancyOptimizer.builder(OptimizerSpec.sgd(0.1))
                    .group(pg).overlapWithDdp(true).build(model().parameters()).hookWithZeroStep(null));
        });
    }
}
