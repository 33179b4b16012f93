package io.tensorbus.parallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.algorithms.CommHooks;
import io.tensorbus.distributed.algorithms.Join;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.Reduction;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** DDP against one process on the whole batch; its data and helpers serve the communication hooks' tests too. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public class DistributedDataParallelTest {
    private static final int BATCH = 12;
    private static final int STEPS = 4;
    /** Inputs of {@code STEPS} global batches. */
    public static final Tensor X = Tensor.randn(new Generator(7), DType.FLOAT32, STEPS, BATCH, 8);
    /** Targets of the same batches. */
    public static final Tensor Y = Tensor.randn(new Generator(8), DType.FLOAT32, STEPS, BATCH, 4);

    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"2, sgd", "3, sgd", "2, adam", "3, adam"})
    void ranksWithPartsOfTheBatchTrainLikeOneProcessWithTheWholeBatch(int world, String optimizer) {
        List<List<Tensor>> expected = new ArrayList<>();
        Mlp reference = new Mlp(100);
        Optimizer refOpt = optimizer(optimizer, reference.parameters());
        for (int s = 0; s < STEPS; s++) {
            step(reference, refOpt, X.get(s), Y.get(s));
            expected.add(snapshot(reference));
        }
        Map<Integer, List<List<Tensor>>> seen = new ConcurrentHashMap<>();
        Distributed.spawn(world, pg -> {
            // Different seeds on purpose: construction must broadcast rank 0's parameters.
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(100 + pg.rank()), pg)
                    .bucketCapMb(0.0002).build();
            Optimizer opt = optimizer(optimizer, ddp.parameters());
            List<List<Tensor>> mine = new ArrayList<>();
            for (int s = 0; s < STEPS; s++) {
                step(ddp, opt, shard(X.get(s), pg), shard(Y.get(s), pg));
                mine.add(snapshot(ddp));
            }
            seen.put(pg.rank(), mine);
        });
        for (int r = 0; r < world; r++) {
            for (int s = 0; s < STEPS; s++) {
                assertAllEqual(seen.get(0).get(s), seen.get(r).get(s), 0, "rank " + r + " step " + s);
                assertAllEqual(expected.get(s), seen.get(r).get(s), 2e-5, "rank " + r + " vs one process, step " + s);
            }
        }
    }

    @Test
    void bucketsFollowReverseParameterOrderWithASmallFirstBucket() {
        Distributed.spawn(1, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(1, 300, false), pg)
                    .bucketCapMb(0.004).build();
            assertEquals(List.of(List.of("fc2.bias", "fc2.weight"), List.of("fc1.bias", "fc1.weight")),
                    ddp.bucketNames());
        });
    }

    @ParameterizedTest(name = "{0}, gradients as bucket views: {1}")
    @CsvSource({"sgd, false", "sgd, true", "adam, false", "adam, true"})
    void stepsInsideMemoryScopesTrainExactlyAsStepsWithout(String optimizer, boolean asView) {
        Map<String, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            for (boolean scoped : new boolean[] {false, true}) {
                DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(11), pg)
                        .gradientAsBucketView(asView).bucketCapMb(0.0002).build();
                Optimizer opt = optimizer(optimizer, ddp.parameters());
                for (int s = 0; s < STEPS; s++) {
                    // Everything a step allocates goes back at close: buckets, gradients and state must not.
                    try (MemoryScope scope = scoped ? MemoryScope.open() : null) {
                        step(ddp, opt, shard(X.get(s), pg), shard(Y.get(s), pg));
                    }
                }
                got.put(pg.rank() + (scoped ? " scoped" : " plain"), snapshot(ddp));
            }
        });
        for (int r = 0; r < 2; r++) {
            assertAllEqual(got.get(r + " plain"), got.get(r + " scoped"), 0, "rank " + r);
        }
    }

    @Test
    void gradientsAsBucketViewsHoldTheSameAverages() {
        Map<Integer, List<Tensor>> plain = new ConcurrentHashMap<>();
        Map<Integer, List<Tensor>> views = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            for (boolean asView : new boolean[] {false, true}) {
                DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(5), pg)
                        .gradientAsBucketView(asView).bucketCapMb(0.0002).build();
                for (int s = 0; s < 2; s++) {
                    ddp.zeroGrad();
                    loss(ddp, shard(X.get(s), pg), shard(Y.get(s), pg)).backward();
                }
                List<Tensor> grads = ddp.parameters().stream().map(p -> p.grad().clone()).toList();
                (asView ? views : plain).put(pg.rank(), grads);
                if (asView) {
                    Tensor g = ddp.parameters().get(0).grad();
                    assertTrue(g.base() != null, "with gradientAsBucketView the gradient is a view of its bucket");
                }
            }
        });
        assertAllEqual(plain.get(0), views.get(0), 0, "bucket views");
        assertAllEqual(plain.get(0), plain.get(1), 0, "ranks");
    }

    @Test
    void noSyncAccumulationEqualsTheLargerBatch() {
        // Three micro-batches per rank: two accumulate locally, the third synchronises the sum.
        Mlp reference = new Mlp(3);
        Tensor sum = null;
        for (int r = 0; r < 2; r++) {
            for (int k = 0; k < 3; k++) {
                Tensor l = loss(reference, part(X.get(k), r, 2), part(Y.get(k), r, 2));
                sum = sum == null ? l : sum.add(l);
            }
        }
        sum.div(2).backward();
        List<Tensor> expected = reference.parameters().stream().map(Tensor::grad).toList();
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(3), pg).build();
            try (NoSync ignored = ddp.noSync()) {
                for (int k = 0; k < 2; k++) {
                    loss(ddp, shard(X.get(k), pg), shard(Y.get(k), pg)).backward();
                }
            }
            loss(ddp, shard(X.get(2), pg), shard(Y.get(2), pg)).backward();
            got.put(pg.rank(), ddp.parameters().stream().map(Tensor::grad).toList());
        });
        assertAllEqual(expected, got.get(0), 2e-6, "rank 0");
        assertAllEqual(got.get(0), got.get(1), 0, "rank 1");
    }

    @Test
    void anUnusedParameterWithoutDetectionFailsTheNextForwardNamingIt() {
        Map<Integer, String> errors = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(1, 16, true), pg).build();
            loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> ddp.forward(shard(X.get(1), pg)));
            errors.put(pg.rank(), e.getMessage());
        });
        for (String message : errors.values()) {
            assertTrue(message.contains("extra.weight (index 4)") && message.contains("extra.bias (index 5)")
                    && message.contains("findUnusedParameters") && !message.contains("fc1"), message);
        }
    }

    @Test
    void findUnusedParametersAveragesWhatWasUsedAndLeavesGloballyUnusedGradientsAlone() {
        // Rank 0 uses the extra layer, rank 1 does not: its average takes rank 1's zero contribution.
        Mlp reference = new Mlp(4, 16, true);
        reference.useExtra = true;
        Tensor l0 = loss(reference, part(X.get(0), 0, 2), part(Y.get(0), 0, 2));
        reference.useExtra = false;
        Tensor l1 = loss(reference, part(X.get(0), 1, 2), part(Y.get(0), 1, 2));
        l0.add(l1).div(2).backward();
        List<Tensor> expected = reference.parameters().stream().map(Tensor::grad).toList();
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Map<Integer, Tensor> unusedEverywhere = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Mlp model = new Mlp(4, 16, true);
            DistributedDataParallel ddp = DistributedDataParallel.builder(model, pg).findUnusedParameters(true)
                    .bucketCapMb(0.0002).build();
            model.useExtra = pg.rank() == 0;
            loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
            got.put(pg.rank(), ddp.parameters().stream().map(Tensor::grad).toList());
            ddp.zeroGrad(true);
            model.useExtra = false;
            loss(ddp, shard(X.get(1), pg), shard(Y.get(1), pg)).backward();
            Tensor g = model.extra.weight().grad();
            unusedEverywhere.put(pg.rank(), g == null ? Tensor.zeros(0) : g);
        });
        assertAllEqual(expected, got.get(0), 2e-6, "rank 0");
        assertAllEqual(got.get(0), got.get(1), 0, "rank 1");
        assertEquals(0, unusedEverywhere.get(0).numel(), "a gradient no rank produced stays null");
    }

    @Test
    void staticGraphHandlesAnUnusedParameterWithoutAGraphWalk() {
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Mlp reference = new Mlp(6, 16, true);
        Optimizer refOpt = optimizer("sgd", reference.parameters());
        for (int s = 0; s < 3; s++) {
            step(reference, refOpt, X.get(s), Y.get(s));
        }
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(6, 16, true), pg).staticGraph(true)
                    .bucketCapMb(0.0002).build();
            Optimizer opt = optimizer("sgd", ddp.parameters());
            for (int s = 0; s < 3; s++) {
                step(ddp, opt, shard(X.get(s), pg), shard(Y.get(s), pg));
            }
            got.put(pg.rank(), snapshot(ddp));
        });
        assertAllEqual(snapshot(reference), got.get(0), 2e-5, "rank 0");
        assertAllEqual(got.get(0), got.get(1), 0, "rank 1");
    }

    @Test
    void joinLetsRanksWithFewerBatchesFinishAndEndsWithIdenticalModels() {
        // Rank 0 has 2 batches, rank 1 has 4; averages always divide by the world size.
        Mlp reference = new Mlp(9);
        SGD refOpt = SGD.builder().lr(0.1).build(reference.parameters());
        for (int s = 0; s < 4; s++) {
            refOpt.zeroGrad();
            Tensor l = loss(reference, part(X.get(s), 1, 2), part(Y.get(s), 1, 2));
            if (s < 2) {
                l = l.add(loss(reference, part(X.get(s), 0, 2), part(Y.get(s), 0, 2)));
            }
            l.div(2).backward();
            refOpt.step();
        }
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(9), pg).build();
            SGD opt = SGD.builder().lr(0.1).build(ddp.parameters());
            try (Join ignored = ddp.join()) {
                for (int s = 0; s < (pg.rank() == 0 ? 2 : 4); s++) {
                    opt.zeroGrad();
                    loss(ddp, shard(X.get(s), pg), shard(Y.get(s), pg)).backward();
                    opt.step();
                }
            }
            got.put(pg.rank(), snapshot(ddp));
        });
        assertAllEqual(snapshot(reference), got.get(1), 2e-6, "rank 1");
        assertAllEqual(got.get(1), got.get(0), 0, "rank 0 after the final broadcast");
    }

    @Test
    void fp16AndBf16CompressionStayWithinTheirPrecision() {
        Map<String, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            for (String hook : List.of("none", "fp16", "bf16")) {
                DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(11), pg).build();
                if (!hook.equals("none")) {
                    ddp.registerCommHook(hook.equals("fp16") ? CommHooks.fp16Compress() : CommHooks.bf16Compress());
                }
                loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
                got.put(hook + pg.rank(), ddp.parameters().stream().map(Tensor::grad).toList());
            }
        });
        assertAllEqual(got.get("none0"), got.get("fp160"), 2e-3, "fp16");
        assertAllEqual(got.get("none0"), got.get("bf160"), 2e-2, "bf16");
        assertAllEqual(got.get("fp160"), got.get("fp161"), 0, "fp16 ranks");
        assertThrows(AssertionError.class, () -> assertAllEqual(got.get("none0"), got.get("bf160"), 1e-7, "bf16"),
                "bf16 rounding must be visible, or the hook did not run");
    }

    @Test
    void buffersAreBroadcastFromRankZeroBeforeEachTrainingForward() {
        Map<String, Double> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            for (boolean broadcast : new boolean[] {true, false}) {
                WithBuffer model = new WithBuffer();
                DistributedDataParallel ddp = DistributedDataParallel.builder(model, pg).broadcastBuffers(broadcast)
                        .build();
                model.counter.filli(10 * (pg.rank() + 1));
                ddp.forward(shard(X.get(0), pg)).sum().backward();
                got.put(broadcast + " " + pg.rank(), model.seenCounter);
            }
        });
        assertEquals(10.0, got.get("true 1"), "rank 1 saw rank 0's buffer");
        assertEquals(20.0, got.get("false 1"), "without broadcastBuffers rank 1 keeps its own");
    }

    @Test
    void parametersThatDifferInShapeAcrossRanksFailConstructionNamingTheParameter() {
        Map<Integer, String> errors = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DistributedDataParallel.builder(new Mlp(1, 16 + pg.rank(), false), pg).build());
            errors.put(pg.rank(), e.getMessage());
        });
        assertTrue(errors.get(0).contains("fc1.weight float32[16, 8] here and fc1.weight float32[17, 8] there"),
                errors.get(0));
        assertTrue(errors.get(1).contains("rank 0"), errors.get(1));
    }

    @Test
    void badSettingsAreRefusedWithTheAllowedValues() {
        Distributed.spawn(1, pg -> {
            assertThrows(IllegalArgumentException.class,
                    () -> DistributedDataParallel.builder(new Mlp(1), pg).bucketCapMb(0));
            Mlp frozen = new Mlp(1);
            frozen.parameters().forEach(p -> p.requiresGrad(false));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DistributedDataParallel.builder(frozen, pg).build());
            assertTrue(e.getMessage().contains("at least one parameter that requires grad"), e.getMessage());
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(1), pg).build();
            ddp.registerCommHook(CommHooks.allReduce());
            assertThrows(IllegalStateException.class, () -> ddp.registerCommHook(CommHooks.allReduce()));
            try (Join ignored = ddp.join()) {
                assertThrows(IllegalStateException.class, ddp::join);
            }
        });
    }

    @Test
    void stateDictKeysCarryTheModulePrefixAsInPyTorch() {
        Distributed.spawn(1, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(1), pg).build();
            assertEquals(List.of("module.fc1.weight", "module.fc1.bias", "module.fc2.weight", "module.fc2.bias"),
                    List.copyOf(ddp.stateDict().keySet()));
            assertSame(ddp.module().parameters().get(0), ddp.parameters().get(0));
            assertNull(ddp.parameters().get(0).grad());
        });
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    /** A module with a buffer that forward reads, to see which value each rank used. */
    static final class WithBuffer extends Module {
        final Tensor counter = registerBuffer("counter", Tensor.zeros(1));
        final Mlp inner = registerModule("inner", new Mlp(2));
        double seenCounter;

        @Override
        public Tensor forward(Tensor x) {
            seenCounter = counter.item();
            return inner.forward(x);
        }
    }

    /** SGD with momentum, or Adam, over {@code params}. */
    public static Optimizer optimizer(String name, List<Tensor> params) {
        return name.equals("adam") ? Adam.builder().lr(0.01).build(params)
                : SGD.builder().lr(0.05).momentum(0.9).build(params);
    }

    /** The mean squared error of {@code model} on a batch. */
    public static Tensor loss(Module model, Tensor x, Tensor y) {
        return Functional.mseLoss(model.forward(x), y, Reduction.MEAN);
    }

    /** One training step: zero, backward, step. */
    public static void step(Module model, Optimizer opt, Tensor x, Tensor y) {
        opt.zeroGrad();
        loss(model, x, y).backward();
        opt.step();
    }

    /** This rank's equal part of a global batch. */
    public static Tensor shard(Tensor batch, ProcessGroup pg) {
        return part(batch, pg.rank(), pg.size());
    }

    static Tensor part(Tensor batch, int rank, int world) {
        int n = batch.size(0) / world;
        return batch.narrow(0, rank * n, n);
    }

    static List<Tensor> snapshot(Module m) {
        return m.parameters().stream().map(p -> p.detach().clone()).toList();
    }

    static void assertAllEqual(List<Tensor> expected, List<Tensor> actual, double tolerance, String what) {
        assertNotNull(actual, what);
        assertEquals(expected.size(), actual.size(), what);
        for (int i = 0; i < expected.size(); i++) {
            float[] e = expected.get(i).toFloatArray();
            float[] a = actual.get(i).toFloatArray();
            assertEquals(e.length, a.length, what + " tensor " + i);
            if (tolerance == 0) {
                assertArrayEquals(e, a, what + " tensor " + i);
                continue;
            }
            for (int j = 0; j < e.length; j++) {
                double scale = Math.max(1, Math.abs(e[j]));
                assertTrue(Math.abs(e[j] - a[j]) <= tolerance * scale,
                        what + " tensor " + i + " element " + j + ": expected " + e[j] + " got " + a[j]);
            }
        }
    }
}
