package io.tensorbus.parallel;

import static io.tensorbus.parallel.DistributedDataParallelTest.X;
import static io.tensorbus.parallel.DistributedDataParallelTest.Y;
import static io.tensorbus.parallel.DistributedDataParallelTest.assertAllEqual;
import static io.tensorbus.parallel.DistributedDataParallelTest.loss;
import static io.tensorbus.parallel.DistributedDataParallelTest.part;
import static io.tensorbus.parallel.DistributedDataParallelTest.shard;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.algorithms.Join;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The combinations of options where PyTorch's behaviour is easy to get wrong (found in review). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedDataParallelEdgeCaseTest {

    @Test
    void aParameterUsedOnlyInsideNoSyncStillGetsTheAveragedGradient() {
        Mlp reference = new Mlp(4, 16, true);
        reference.useExtra = true;
        Tensor l0 = loss(reference, part(X.get(0), 0, 2), part(Y.get(0), 0, 2));
        reference.useExtra = false;
        Tensor rest = loss(reference, part(X.get(1), 0, 2), part(Y.get(1), 0, 2))
                .add(loss(reference, part(X.get(0), 1, 2), part(Y.get(0), 1, 2)))
                .add(loss(reference, part(X.get(1), 1, 2), part(Y.get(1), 1, 2)));
        l0.add(rest).div(2).backward();
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Mlp m = new Mlp(4, 16, true);
            DistributedDataParallel ddp = DistributedDataParallel.builder(m, pg).findUnusedParameters(true).build();
            try (NoSync ignored = ddp.noSync()) {
                m.useExtra = pg.rank() == 0;
                loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
            }
            m.useExtra = false;
            loss(ddp, shard(X.get(1), pg), shard(Y.get(1), pg)).backward();
            got.put(pg.rank(), ddp.parameters().stream().map(Tensor::grad).toList());
        });
        List<Tensor> expected = reference.parameters().stream().map(Tensor::grad).toList();
        assertAllEqual(expected, got.get(0), 2e-6, "rank 0");
        assertAllEqual(got.get(0), got.get(1), 0, "rank 1");
    }

    @Test
    void joinedRanksFollowForwardsThatDoNotSynchroniseGradients() {
        Map<Integer, Double> counters = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            DistributedDataParallelTest.WithBuffer model = new DistributedDataParallelTest.WithBuffer();
            DistributedDataParallel ddp = DistributedDataParallel.builder(model, pg).build();
            try (Join ignored = ddp.join()) {
                for (int s = 0; s < (pg.rank() == 0 ? 1 : 3); s++) {
                    if (pg.rank() == 1 && s == 1) {
                        try (NoSync n = ddp.noSync()) {
                            ddp.forward(shard(X.get(s), pg)).sum().backward();
                        }
                        try (var g = Autograd.noGrad()) {
                            ddp.forward(shard(X.get(s), pg));
                        }
                    }
                    model.counter.filli(pg.rank() == 0 ? 5 : 7);
                    ddp.forward(shard(X.get(s), pg)).sum().backward();
                }
            }
            counters.put(pg.rank(), model.seenCounter);
        });
        // Rank 1's last synchronised forward took its buffer from itself, the highest rank still training.
        assertEquals(7.0, counters.get(1));
    }

    @Test
    void staticGraphAveragesGradientsThatArriveInsideAReentrantBackward() {
        Checkpointed reference = new Checkpointed(3);
        loss(reference, X.get(0), Y.get(0)).backward();
        Map<Integer, List<Tensor>> got = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Checkpointed m = new Checkpointed(3);
            DistributedDataParallel ddp = DistributedDataParallel.builder(m, pg).staticGraph(true).build();
            for (int s = 0; s < 2; s++) {
                ddp.zeroGrad();
                loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
                got.put(pg.rank() * 10 + s, ddp.parameters().stream().map(p -> p.grad().clone()).toList());
            }
        });
        List<Tensor> expected = reference.parameters().stream().map(Tensor::grad).toList();
        for (int key : List.of(0, 1, 10, 11)) {
            assertAllEqual(expected, got.get(key), 2e-6, "rank " + key / 10 + " step " + key % 10);
        }
    }

    @Test
    void aForwardWithoutBackwardOrABackwardThatFailedEarlyIsForgotten() {
        Distributed.spawn(2, pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(1), pg).build();
            ddp.forward(shard(X.get(0), pg));
            ddp.eval();
            ddp.forward(shard(X.get(0), pg));
            ddp.train();
            Tensor out = ddp.forward(shard(X.get(1), pg));
            out.registerHook(g -> {
                throw new IllegalStateException("boom");
            });
            try {
                out.sum().backward();
            } catch (IllegalStateException expected) {
                // The pass failed before any parameter's gradient arrived.
            }
            ddp.zeroGrad(true);
            loss(ddp, shard(X.get(2), pg), shard(Y.get(2), pg)).backward();
        });
    }

    @Test
    void bucketViewsLeaveTheGradientOfAnUnusedParameterNull() {
        Map<Integer, Tensor> extra = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Mlp m = new Mlp(4, 16, true);
            Tensor before = m.extra.weight().detach().clone();
            DistributedDataParallel ddp = DistributedDataParallel.builder(m, pg).gradientAsBucketView(true)
                    .findUnusedParameters(true).build();
            assertNull(m.extra.weight().grad(), "no gradient before any backward");
            SGD sgd = SGD.builder().lr(0.1).weightDecay(0.5).build(ddp.parameters());
            loss(ddp, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
            sgd.step();
            assertNull(m.extra.weight().grad(), "a parameter no rank used has no gradient");
            extra.put(pg.rank(), m.extra.weight().sub(before).abs().sum());
        });
        assertEquals(0.0, extra.get(0).item(), "the optimizer left the unused parameter alone");
    }

    @Test
    void closingTheWrapperDetachesItsHooks() {
        Map<Integer, List<Tensor>> afterClose = new ConcurrentHashMap<>();
        Map<Integer, List<Tensor>> alone = new ConcurrentHashMap<>();
        Map<Integer, List<Tensor>> rewrapped = new ConcurrentHashMap<>();
        Distributed.spawn(2, pg -> {
            Mlp m = new Mlp(1);
            DistributedDataParallel first = DistributedDataParallel.builder(m, pg).build();
            // A forward through the wrapper arms its hooks for the next backward: closing must take them off.
            Tensor l = loss(first, shard(X.get(0), pg), shard(Y.get(0), pg));
            first.close();
            l.backward();
            afterClose.put(pg.rank(), grads(m));
            Mlp reference = new Mlp(1);
            loss(reference, shard(X.get(0), pg), shard(Y.get(0), pg)).backward();
            alone.put(pg.rank(), grads(reference));
            m.zeroGrad();
            DistributedDataParallel second = DistributedDataParallel.builder(m, pg).build();
            loss(second, shard(X.get(1), pg), shard(Y.get(1), pg)).backward();
            rewrapped.put(pg.rank(), grads(m));
        });
        assertAllEqual(alone.get(0), afterClose.get(0), 0, "rank 0 after close: local gradients only");
        assertAllEqual(alone.get(1), afterClose.get(1), 0, "rank 1 after close: local gradients only");
        assertNotEquals(alone.get(0).get(0).getDouble(0, 0), alone.get(1).get(0).getDouble(0, 0),
                "the ranks' shards give different local gradients, so an all-reduce would show");
        assertAllEqual(rewrapped.get(0), rewrapped.get(1), 0, "the module wrapped again averages");
    }

    private static List<Tensor> grads(Module m) {
        return m.parameters().stream().map(p -> p.grad().clone()).toList();
    }

    /** lin1, then lin2 recomputed in backward (activation checkpointing: a backward inside the backward). */
    static final class Checkpointed extends Module {
        final Linear lin1;
        final Linear lin2;

        Checkpointed(long seed) {
            Generator g = new Generator(seed);
            lin1 = registerModule("lin1", new Linear(8, 16, true, g));
            lin2 = registerModule("lin2", new Linear(16, 4, true, g));
        }

        @Override
        public Tensor forward(Tensor x) {
            Tensor h = lin1.forward(x).relu();
            Tensor out;
            try (var ignored = Autograd.noGrad()) {
                out = lin2.forward(h);
            }
            return Autograd.record("CheckpointBackward", out, grads -> {
                try (var ignored = Autograd.enableGrad()) {
                    Tensor h2 = h.detach().requiresGrad(true);
                    lin2.forward(h2).backward(grads[0]);
                    return new Tensor[] {h2.grad()};
                }
            }, h);
        }
    }
}
