package io.tensorbus.distributed.algorithms;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.optim.PostLocalSGDOptimizer;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.parallel.DistributedDataParallelTest;
import io.tensorbus.parallel.Mlp;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Post-local SGD: its hook, the periodic model averager and PostLocalSGDOptimizer under DDP. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostLocalSGDTest {

    private static float[] apply(CommHook hook, ProcessGroup pg, Tensor local) throws Exception {
        return hook.apply(pg, PowerSGDTest.bucket(0, true, local)).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS).toFloatArray();
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void theHookAllReducesOverTheGroupThenOnlyWithinTheSubgroup(int world) {
        Distributed.spawn(world, pg -> {
            ProcessGroup alone = Distributed.newSubgroups(pg, 1).await(10, TimeUnit.SECONDS).current().orElseThrow();
            PostLocalSGDState state = new PostLocalSGDState(alone, 2, true);
            CommHook hook = CommHooks.postLocalSGD(state);
            float mean = (world - 1) / 2f;
            for (int i = 0; i < 2; i++) {
                assertArrayEquals(new float[] {mean}, apply(hook, pg, Tensor.of(new float[] {pg.rank()})), 1e-6f,
                        "iteration " + i + " all-reduces over the group");
            }
            assertEquals(2, state.iteration());
            assertArrayEquals(new float[] {pg.rank()}, apply(hook, pg, Tensor.of(new float[] {pg.rank()})), 0f,
                    "after the switch, a subgroup of one keeps the local gradient");
            CommHook off = CommHooks.postLocalSGD(new PostLocalSGDState(null, 0, false));
            assertArrayEquals(new float[] {pg.rank() + 1}, apply(off, pg, Tensor.of(new float[] {pg.rank() + 1})), 0f);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void theAveragerAveragesEveryPeriodAfterItsWarmUp(int world) {
        Distributed.spawn(world, pg -> {
            PeriodicModelAverager averager = new PeriodicModelAverager(2, 1, pg);
            Tensor p = Tensor.of(new float[] {0, 0}).requiresGrad(true);
            p.setGrad(Tensor.zeros(2));
            Tensor noGrad = Tensor.of(new float[] {pg.rank()});
            float mean = (world - 1) / 2f;
            boolean[] averaged = {false, true, false, true, false};
            for (int step = 0; step < averaged.length; step++) {
                p.detach().copyi(Tensor.of(new float[] {pg.rank(), 10f * pg.rank()}));
                averager.averageParameters(List.of(p, noGrad));
                float[] expected = averaged[step] ? new float[] {mean, 10 * mean}
                        : new float[] {pg.rank(), 10f * pg.rank()};
                assertArrayEquals(expected, p.toFloatArray(), 1e-5f, "step " + step);
                assertArrayEquals(new float[] {pg.rank()}, noGrad.toFloatArray(), 0f, "no gradient, not averaged");
            }
            assertEquals(5, averager.step());
        });
    }

    /** DDP with the hook over subgroups of one and averaging every second step after two global ones. */
    @Test
    void ddpReplicasDriftBetweenAveragesAndAgreeAfterEach() {
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(7), pg).build();
            ProcessGroup alone = Distributed.newSubgroups(pg, 1).await(10, TimeUnit.SECONDS).current().orElseThrow();
            ddp.registerCommHook(CommHooks.postLocalSGD(new PostLocalSGDState(alone, 2, true)));
            PostLocalSGDOptimizer opt = new PostLocalSGDOptimizer(
                    DistributedDataParallelTest.optimizer("sgd", ddp.parameters()),
                    new PeriodicModelAverager(2, 2, pg));
            for (int s = 0; s < 6; s++) {
                opt.zeroGrad();
                Tensor x = DistributedDataParallelTest.shard(DistributedDataParallelTest.X.get(s % 4), pg);
                Tensor y = DistributedDataParallelTest.shard(DistributedDataParallelTest.Y.get(s % 4), pg);
                DistributedDataParallelTest.loss(ddp, x, y).backward();
                opt.step();
                boolean agree = sameOnEveryRank(pg, ddp.parameters());
                boolean expected = s < 2 || s % 2 == 0;
                assertEquals(expected, agree, "step " + s + " on rank " + pg.rank());
            }
        });
    }

    private static boolean sameOnEveryRank(ProcessGroup pg, List<Tensor> params) throws Exception {
        for (Tensor p : params) {
            Tensor max = p.detach().clone();
            pg.allReduce(max, ReduceOp.MAX).await(10, TimeUnit.SECONDS);
            Tensor min = p.detach().clone();
            pg.allReduce(min, ReduceOp.MIN).await(10, TimeUnit.SECONDS);
            if (!Arrays.equals(max.toFloatArray(), min.toFloatArray())) {
                return false;
            }
        }
        return true;
    }

    @Test
    void badSettingsAreRefused() {
        Distributed.spawn(1, pg -> {
            assertThrows(IllegalArgumentException.class, () -> new PeriodicModelAverager(0, 0, pg));
            assertThrows(IllegalArgumentException.class, () -> new PeriodicModelAverager(1, -1, pg));
            assertThrows(IllegalArgumentException.class, () -> new PostLocalSGDState(pg, -1, true));
            var none = assertThrows(IllegalArgumentException.class, () -> new PostLocalSGDState(null, 5, true));
            assertTrue(none.getMessage().contains("subgroup"), none.getMessage());
            assertThrows(NullPointerException.class, () -> CommHooks.postLocalSGD(null));
            assertEquals(0, new PeriodicModelAverager(1, 0, pg).step());
        });
    }
}
