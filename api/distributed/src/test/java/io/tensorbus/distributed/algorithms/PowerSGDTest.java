package io.tensorbus.distributed.algorithms;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.parallel.DistributedDataParallelTest;
import io.tensorbus.parallel.Mlp;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The PowerSGD hooks on buckets built by hand, where the exact answer is known: a rank-1 average is rebuilt exactly
 * by rank-1 PowerSGD, a full-rank approximation is the plain average, vectors are all-reduced as they are, and the
 * error feedback keeps what the compression lost.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PowerSGDTest {

    /** A bucket of {@code tensors} (one flat buffer, views shaped as the tensors), numbered {@code index}. */
    static GradBucket bucket(int index, boolean last, Tensor... tensors) {
        int total = 0;
        for (Tensor t : tensors) {
            total += t.numel();
        }
        Tensor buffer = Tensor.zeros(DType.FLOAT32, total);
        List<Tensor> views = new ArrayList<>();
        List<Tensor> params = new ArrayList<>();
        int at = 0;
        for (Tensor t : tensors) {
            Tensor view = buffer.narrow(0, at, t.numel()).view(t.shape());
            view.copyi(t);
            views.add(view);
            params.add(Tensor.zeros(t.shape()));
            at += t.numel();
        }
        return new GradBucket(index, buffer, params, views, last);
    }

    /** Rank r's gradient matrix {@code u v_r^T}: the average over ranks is rank 1 too. */
    private static Tensor rankOne(int rank, int n, int m) {
        float[] v = new float[n * m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                v[i * m + j] = (i + 1) * (float) Math.cos(j + 3.0 * rank);
            }
        }
        return Tensor.of(v, n, m);
    }

    private static float[] average(ProcessGroup pg, Tensor mine) throws Exception {
        Tensor sum = mine.clone();
        pg.allReduce(sum).await(10, TimeUnit.SECONDS);
        return sum.div(pg.size()).toFloatArray();
    }

    private static PowerSGDState.Builder compressingFromIterationTwo() {
        return PowerSGDState.builder().startPowerSGDIter(2);
    }

    /** Two iterations of all-reduce (the start), then one compressed; returns the compressed iteration's result. */
    private static Tensor compressedResult(PowerSGDState state, ProcessGroup pg, CommHook hook, Tensor... tensors)
            throws Exception {
        for (int i = 0; i < 2; i++) {
            GradBucket warmUp = bucket(0, true, tensors);
            float[] expected = average(pg, warmUp.buffer());
            Tensor r = hook.apply(pg, warmUp).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertArrayEquals(expected, r.toFloatArray(), 1e-6f, "before startPowerSGDIter the hook all-reduces");
        }
        assertEquals(2, state.iteration());
        return hook.apply(pg, bucket(0, true, tensors)).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void rankOnePowerSGDRebuildsARankOneAverageAndAllReducesVectors(int world) {
        Distributed.spawn(world, pg -> {
            Tensor matrix = rankOne(pg.rank(), 12, 10);
            Tensor bias = Tensor.of(new float[] {pg.rank(), 2 * pg.rank(), -1});
            PowerSGDState state = compressingFromIterationTwo().build();
            Tensor out = compressedResult(state, pg, CommHooks.powerSGD(state), matrix, bias);
            float[] expected = new float[120 + 3];
            System.arraycopy(average(pg, matrix), 0, expected, 0, 120);
            System.arraycopy(average(pg, bias), 0, expected, 120, 3);
            assertArrayEquals(expected, out.toFloatArray(), 1e-4f, "rank " + pg.rank());
            PowerSGDState.CompressionStats stats = state.compressionStats();
            assertEquals(123, stats.numelBefore(), "one compressed iteration");
            assertEquals(12 + 10 + 3, stats.numelAfter(), "P, Q and the bias");
            assertEquals(123.0 / 25, stats.rate(), 1e-12);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void aFullRankApproximationIsThePlainAverage(int world) {
        Distributed.spawn(world, pg -> {
            Tensor a = Tensor.randn(new Generator(10 + pg.rank()), DType.FLOAT32, 6, 5);
            Tensor b = Tensor.randn(new Generator(20 + pg.rank()), DType.FLOAT32, 4, 4);
            PowerSGDState state = compressingFromIterationTwo().matrixApproximationRank(6).minCompressionRate(0.1)
                    .build();
            Tensor out = compressedResult(state, pg, CommHooks.powerSGD(state), a, b);
            float[] expected = new float[46];
            System.arraycopy(average(pg, a), 0, expected, 0, 30);
            System.arraycopy(average(pg, b), 0, expected, 30, 16);
            assertArrayEquals(expected, out.toFloatArray(), 1e-4f, "rank " + pg.rank());
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void batchedPowerSGDAtFullRankIsThePlainAverage(int world) {
        Distributed.spawn(world, pg -> {
            // 10 elements: a 4 x 4 square with 6 zeros of padding, at rank 4.
            Tensor a = Tensor.randn(new Generator(30 + pg.rank()), DType.FLOAT32, 10);
            PowerSGDState state = compressingFromIterationTwo().matrixApproximationRank(4).build();
            Tensor out = compressedResult(state, pg, CommHooks.batchedPowerSGD(state), a);
            assertArrayEquals(average(pg, a), out.toFloatArray(), 1e-4f, "rank " + pg.rank());
            assertEquals(10, state.compressionStats().numelBefore());
            assertEquals(2 * 4 * 4, state.compressionStats().numelAfter());
        });
    }

    @Test
    void theErrorFeedbackKeepsWhatTheCompressionLostAndAddsItNextTime() {
        Distributed.spawn(2, pg -> {
            // A rank-2 average compressed at rank 1 loses something.
            Tensor m = Tensor.randn(new Generator(40 + pg.rank()), DType.FLOAT32, 8, 8);
            PowerSGDState state = compressingFromIterationTwo().build();
            Tensor out = compressedResult(state, pg, CommHooks.powerSGD(state), m);
            Tensor error = state.errors.get(0);
            assertArrayEquals(m.reshape(-1).sub(out).toFloatArray(), error.toFloatArray(), 1e-6f,
                    "error = input - output");
            assertTrue(error.abs().sum().item() > 1e-3, "rank 1 cannot hold an 8 x 8 random average");
            GradBucket next = bucket(0, true, m);
            CommHooks.powerSGD(state).apply(pg, next).toCompletionStage().toCompletableFuture().get(10,
                    TimeUnit.SECONDS);
            Tensor second = state.errors.get(0);
            assertEquals(64, second.numel());
            assertEquals(4, state.iteration(), "two all-reduced iterations and two compressed");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void theWrappersHandTheInnerHookAHalfPrecisionBucket(int world) {
        Distributed.spawn(world, pg -> {
            Tensor g = Tensor.of(new float[] {1.5f, -2f, 3.25f, pg.rank()});
            List<DType> seen = new ArrayList<>();
            CommHook recording = (group, b) -> {
                seen.add(b.buffer().dtype());
                seen.add(b.gradients().getFirst().dtype());
                return CommHooks.allReduce().apply(group, b);
            };
            Tensor fp16 = CommHooks.fp16CompressWrapper(recording).apply(pg, bucket(0, true, g))
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            Tensor bf16 = CommHooks.bf16CompressWrapper(recording).apply(pg, bucket(0, true, g))
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(List.of(DType.FLOAT16, DType.FLOAT16, DType.BFLOAT16, DType.BFLOAT16), seen);
            float[] expected = {1.5f, -2f, 3.25f, (world - 1) / 2f};
            assertArrayEquals(expected, fp16.to(DType.FLOAT32).toFloatArray(), 0f, "exact in float16");
            assertArrayEquals(expected, bf16.to(DType.FLOAT32).toFloatArray(), 0f, "exact in bfloat16");
            Tensor kept = CommHooks.noop().apply(pg, bucket(0, true, g)).toCompletionStage().toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertArrayEquals(g.toFloatArray(), kept.toFloatArray(), 0f, "noop keeps the local gradients");
        });
    }

    /**
     * DDP with rank-1 PowerSGD (compressing from the third step): every rank ends each step with the same model, as
     * every rank gets the same approximation, and the loss on the whole batch falls.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void ddpWithPowerSGDKeepsEveryRankOnTheSameModel(int world) {
        Distributed.spawn(world, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(100 + pg.rank()), pg)
                    .bucketCapMb(0.001).build();
            PowerSGDState state = compressingFromIterationTwo().build();
            ddp.registerCommHook(CommHooks.powerSGD(state));
            var opt = DistributedDataParallelTest.optimizer("sgd", ddp.parameters());
            Tensor x = DistributedDataParallelTest.X.get(0);
            Tensor y = DistributedDataParallelTest.Y.get(0);
            double before = DistributedDataParallelTest.loss(ddp.module(), x, y).item();
            for (int s = 0; s < 6; s++) {
                // Each step in a memory scope, as the training loops run it: the state must outlive it.
                try (MemoryScope step = MemoryScope.open()) {
                    DistributedDataParallelTest.step(ddp, opt, DistributedDataParallelTest.shard(x, pg),
                            DistributedDataParallelTest.shard(y, pg));
                }
                for (Tensor p : ddp.parameters()) {
                    Tensor max = p.detach().clone();
                    pg.allReduce(max, ReduceOp.MAX).await(10, TimeUnit.SECONDS);
                    assertArrayEquals(max.toFloatArray(), p.toFloatArray(), 0f, "rank " + pg.rank() + " step " + s);
                }
            }
            assertTrue(state.compressionStats().rate() > 1, "compressed: " + state.compressionStats());
            assertTrue(DistributedDataParallelTest.loss(ddp.module(), x, y).item() < before, "the loss falls");
            ddp.close();
        });
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PowerSGDState.builder().matrixApproximationRank(0));
        assertThrows(IllegalArgumentException.class, () -> PowerSGDState.builder().startPowerSGDIter(-1));
        assertThrows(IllegalArgumentException.class, () -> PowerSGDState.builder().minCompressionRate(0));
        assertThrows(IllegalArgumentException.class, () -> PowerSGDState.builder().orthogonalizationEpsilon(-1e-8));
        var early = assertThrows(IllegalArgumentException.class,
                () -> PowerSGDState.builder().startPowerSGDIter(1).build());
        assertTrue(early.getMessage().contains("> 1"), early.getMessage());
        PowerSGDState.builder().startPowerSGDIter(0).useErrorFeedback(false).warmStart(false).build();
        assertThrows(NullPointerException.class, () -> CommHooks.powerSGD(null));
        assertThrows(NullPointerException.class, () -> CommHooks.fp16CompressWrapper(null));
    }
}
