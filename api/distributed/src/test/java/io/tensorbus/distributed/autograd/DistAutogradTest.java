package io.tensorbus.distributed.autograd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Distributed autograd across workers in one JVM: the seed's example against PyTorch's values, graphs of every
 * shape the issue names, errors as PyTorch raises them, and contexts released everywhere.
 */
class DistAutogradTest {
    /** Tensors a worker's functions keep between calls (a loss to start backward from, say), by key. */
    private static final Map<String, Tensor> KEPT = new ConcurrentHashMap<>();
    private RpcWorkers workers;

    private static RpcRegistry registry() {
        return new RpcRegistry()
                .register("test.my_add", args -> ((Tensor) args.get(0)).add((Tensor) args.get(1)))
                .register("test.my_mul", args -> ((Tensor) args.get(0)).mul((Tensor) args.get(1)))
                .register("test.relay", args -> RpcAgent.current().rpcSync("worker2", "test.my_mul",
                        ((Tensor) args.get(0)).add(1.0), args.get(1)))
                .register("test.relayWithUnused", args -> {
                    Tensor shifted = ((Tensor) args.get(0)).add(1.0);
                    RpcAgent.current().<Tensor>rpcSync("worker2", "test.my_add", shifted, args.get(1));
                    return RpcAgent.current().rpcSync("worker2", "test.my_mul", shifted, args.get(1));
                })
                .register("test.rand", args -> Tensor.rand(3, 3).requiresGrad(true))
                .register("test.keepLoss", args -> {
                    Tensor t = (Tensor) args.get(0);
                    KEPT.put("loss", t.mul(t).sum());
                    return null;
                })
                .register("test.backwardHere", args -> {
                    RpcAgent.current().distAutograd().backward((Long) args.get(0), List.of(KEPT.get("loss")));
                    return null;
                })
                .register("test.slow", args -> {
                    Thread.sleep(300);
                    return ((Tensor) args.get(0)).mul(2.0);
                });
    }

    private RpcWorkers start(int n) throws Exception {
        return start(n, Duration.ofSeconds(20));
    }

    private RpcWorkers start(int n, Duration timeout) throws Exception {
        workers = new RpcWorkers().start(n, r -> RpcOptions.builder().registry(registry()).timeout(timeout));
        return workers;
    }

    @AfterEach
    void stop() throws Exception {
        KEPT.clear();
        if (workers != null) {
            workers.close();
        }
    }

    @Test
    void theSeedsExampleGetsPyTorchsGradients() throws Exception {
        Map<String, Tensor> g = Golden.load("seed.safetensors");
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor t1 = g.get("t1").clone().requiresGrad(true);
        Tensor t2 = g.get("t2").clone().requiresGrad(true);
        Tensor t4 = g.get("t4").clone().requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor t3 = w0.rpcSync("worker1", "test.my_add", t1, t2);
            assertFalse(t3.isLeaf(), "t3's history is the recv function of the result");
            Tensor loss = t3.mul(t4).sum();
            Golden.close(g.get("t3"), t3, "t3");
            Golden.close(g.get("loss"), loss.reshape(1), "loss");
            dist.backward(context.id(), List.of(loss));
            Map<Tensor, Tensor> grads = dist.getGradients(context.id());
            assertEquals(3, grads.size(), "t1, t2 and t4: " + grads.keySet());
            Golden.close(g.get("grad.t1"), grads.get(t1), "grad t1");
            Golden.close(g.get("grad.t2"), grads.get(t2), "grad t2");
            Golden.close(g.get("grad.t4"), grads.get(t4), "grad t4");
        }
        assertNull(t1.grad(), ".grad is untouched");
        assertNull(t4.grad(), ".grad is untouched");
        contextsGoneEverywhere();
    }

    @Test
    void builtinsInsideAContextGetPyTorchsGradients() throws Exception {
        Map<String, Tensor> g = Golden.load("builtin.safetensors");
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor a = g.get("a").clone().requiresGrad(true);
        Tensor b = g.get("b").clone().requiresGrad(true);
        Tensor c = g.get("c").clone().requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor d = w0.rpcSync("worker1", "builtin.add", a, b);
            Tensor e = w0.rpcSync("worker1", "builtin.mul", d, c);
            Tensor f = w0.rpcSync("worker1", "builtin.add", e, 0.5);
            assertTrue(f.requiresGrad(), "a builtin's result is part of the graph");
            Tensor loss = f.mul(f).sum();
            Golden.close(g.get("loss"), loss.reshape(1), "loss");
            dist.backward(context.id(), List.of(loss));
            Map<Tensor, Tensor> grads = dist.getGradients(context.id());
            Golden.close(g.get("grad.a"), grads.get(a), "grad a");
            Golden.close(g.get("grad.b"), grads.get(b), "grad b");
            Golden.close(g.get("grad.c"), grads.get(c), "grad c");
        }
        contextsGoneEverywhere();
    }

    @Test
    void threeWorkersInAChainSendGradientsBackAlongIt() throws Exception {
        RpcAgent w0 = start(3).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor x = Tensor.rand(4).requiresGrad(true);
        Tensor y = Tensor.rand(4).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            // worker0 -> worker1 (x + 1) -> worker2 ((x + 1) * y) -> back
            Tensor z = w0.rpcSync("worker1", "test.relay", x, y);
            Tensor loss = z.mul(z).sum();
            dist.backward(context.id(), List.of(loss));
            Map<Tensor, Tensor> grads = dist.getGradients(context.id());
            Local local = Local.of(x, y, (a, b) -> {
                Tensor zz = a.add(1.0).mul(b);
                return zz.mul(zz).sum();
            });
            Golden.close(local.gradA(), grads.get(x), "d loss / d x");
            Golden.close(local.gradB(), grads.get(y), "d loss / d y");
            assertTrue(workers.get(2).distAutograd().debugInfo().get("num_current_contexts") == 1,
                    "the context reached worker2 through worker1");
        }
        contextsGoneEverywhere();
    }

    @Test
    void anRRefFetchedInsideTheContextIsPartOfTheGraph() throws Exception {
        // The seed's end-to-end example (0x07): values made on worker1, fetched with toHere inside the context.
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        var rref1 = w0.<Tensor>remote("worker1", "test.rand");
        var rref2 = w0.<Tensor>remote("worker1", "test.rand");
        try (DistAutograd.Context context = dist.context()) {
            Tensor loss = rref1.toHere().add(rref2.toHere()).mul(3.0).sum();
            dist.backward(context.id(), List.of(loss));
            assertEquals(0, dist.getGradients(context.id()).size(), "worker0 holds no leaf");
            long id = context.id();
            Map<Tensor, Tensor> there = workers.get(1).distAutograd().getGradients(id);
            assertEquals(2, there.size(), "both values owned by worker1 got a gradient");
            for (Tensor grad : there.values()) {
                Golden.close(Tensor.full(3.0, grad.dtype(), 3, 3), grad, "d loss / d value");
            }
        }
        rref1.close();
        rref2.close();
        contextsGoneEverywhere();
    }

    @Test
    void theSameTensorSentTwiceGetsBothGradients() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor t = Tensor.rand(5).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor a = w0.rpcSync("worker1", "test.my_mul", t, t);
            Tensor b = w0.rpcSync("worker1", "test.my_add", t, t);
            dist.backward(context.id(), List.of(a.add(b).sum()));
            Golden.close(t.mul(2.0).add(2.0), dist.getGradients(context.id()).get(t), "d (t*t + t+t) / d t");
        }
    }

    @Test
    void backwardCanStartOnAnotherWorkerThanTheForward() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor t = Tensor.rand(6).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            w0.rpcSync("worker1", "test.keepLoss", t);
            w0.rpcSync("worker1", "test.backwardHere", context.id());
            Golden.close(t.mul(2.0), dist.getGradients(context.id()).get(t), "d sum(t*t) / d t");
        }
        contextsGoneEverywhere();
    }

    @Test
    void retainGraphAllowsASecondPassWhichAccumulates() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor t = Tensor.rand(4).requiresGrad(true);
        Tensor u = Tensor.rand(4).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor loss = w0.<Tensor>rpcSync("worker1", "test.my_mul", t, u).sum();
            dist.backward(context.id(), List.of(loss), true);
            dist.backward(context.id(), List.of(loss), false);
            Golden.close(u.mul(2.0), dist.getGradients(context.id()).get(t), "two passes accumulate");
            IllegalStateException third = assertThrows(IllegalStateException.class,
                    () -> dist.backward(context.id(), List.of(loss)));
            assertTrue(third.getMessage().contains("retainGraph"), third.getMessage());
        }
    }

    @Test
    void twoContextsOnTwoThreadsAreIndependent() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor[] results = new Tensor[2];
        Throwable[] failures = new Throwable[2];
        Tensor[] inputs = {Tensor.rand(8).requiresGrad(true), Tensor.rand(8).requiresGrad(true)};
        Thread[] threads = new Thread[2];
        for (int i = 0; i < 2; i++) {
            int k = i;
            threads[i] = new Thread(() -> {
                try (DistAutograd.Context context = dist.context()) {
                    for (int step = 0; step < 20; step++) {
                        Tensor r = w0.rpcSync("worker1", "test.my_mul", inputs[k], inputs[k]);
                        dist.backward(context.id(), List.of(r.sum()));
                    }
                    results[k] = dist.getGradients(context.id()).get(inputs[k]);
                } catch (Throwable t) {
                    failures[k] = t;
                }
            });
            threads[i].start();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        for (int i = 0; i < 2; i++) {
            assertNull(failures[i], () -> "thread failed: " + failures[0] + " / " + failures[1]);
            Golden.close(inputs[i].mul(40.0), results[i], "20 passes of d sum(t*t) / d t in context " + i);
        }
        contextsGoneEverywhere();
    }

    @Test
    void errorsAreThoseOfPyTorch() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> dist.getGradients(12345L));
        assertTrue(unknown.getMessage().contains("no distributed autograd context"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> dist.backward(12345L, List.of(Tensor.scalar(1.0))));
        try (DistAutograd.Context context = dist.context()) {
            IllegalStateException nested = assertThrows(IllegalStateException.class, dist::context);
            assertTrue(nested.getMessage().contains("do not nest"), nested.getMessage());
            IllegalArgumentException noGrad = assertThrows(IllegalArgumentException.class,
                    () -> dist.backward(context.id(), List.of(Tensor.scalar(1.0))));
            assertTrue(noGrad.getMessage().contains("does not require grad"), noGrad.getMessage());
            Tensor notScalar = Tensor.rand(3).requiresGrad(true).mul(2.0);
            IllegalArgumentException shape = assertThrows(IllegalArgumentException.class,
                    () -> dist.backward(context.id(), List.of(notScalar)));
            assertTrue(shape.getMessage().contains("scalars"), shape.getMessage());
            assertThrows(IllegalArgumentException.class, () -> dist.backward(context.id(), List.of()));
        }
        assertThrows(IllegalArgumentException.class, () -> dist.getGradients(0L), "released");
    }

    @Test
    void aResultArrivingAfterItsContextClosedIsDroppedNotLeaked() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor t = Tensor.rand(4).requiresGrad(true);
        Future<Tensor> late;
        try (DistAutograd.Context context = dist.context()) {
            late = w0.rpcAsync("worker1", "test.slow", t);
        }
        Throwable failure = late.toCompletionStage().toCompletableFuture().handle((v, e) -> e).get();
        assertTrue(failure != null && failure.getMessage().contains("released"), String.valueOf(failure));
        contextsGoneEverywhere();
    }

    @Test
    void fastModeFailsNamingAnUnusedRpcInsteadOfDroppingAGradient() throws Exception {
        // The seed's 5.1 example: e = b * c is computed remotely but does not reach the loss. FAST mode counts its
        // send function as a dependency of b, which never receives a gradient: rather than finish with b's
        // gradient missing, the pass fails at once naming the RPC and SMART mode.
        RpcAgent w0 = start(2, Duration.ofSeconds(60)).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor a = Tensor.rand(3, 3).requiresGrad(true);
        Tensor b = Tensor.rand(3, 3).requiresGrad(true);
        Tensor c = Tensor.rand(3, 3).requiresGrad(true);
        for (boolean inline : new boolean[] {true, false}) {
            try (DistAutograd.Context context = dist.context()) {
                Tensor d = w0.rpcSync("worker1", "test.my_add", a, b);
                w0.<Tensor>rpcSync("worker1", "test.my_mul", b, c);
                long t0 = System.nanoTime();
                DistAutogradException e = assertThrows(DistAutogradException.class, () -> {
                    if (inline) {
                        dist.backward(context.id(), List.of(d.sum()));
                    } else {
                        dist.backwardAsync(context.id(), List.of(d.sum()), false)
                                .await(20, TimeUnit.SECONDS);
                    }
                });
                assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(10).toNanos(), "well before the timeout");
                assertTrue(e.getMessage().contains("no gradient came back for the arguments of 'test.my_mul' to "
                        + "worker1 (rank 1) (recorded on worker0 (rank 0))") && e.getMessage().contains("SMART"),
                        e.getMessage());
                assertFalse(e.getMessage().contains("test.my_add"), "the used RPC is not named: " + e.getMessage());
            }
        }
        contextsGoneEverywhere();
    }

    @Test
    void smartModeGivesTheSingleProcessGradientsOfTheSeeds51Example() throws Exception {
        RpcAgent w0 = start(2).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor a = Tensor.rand(3, 3).requiresGrad(true);
        Tensor b = Tensor.rand(3, 3).requiresGrad(true);
        Tensor c = Tensor.rand(3, 3).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor d = w0.rpcSync("worker1", "test.my_add", a, b);
            w0.<Tensor>rpcSync("worker1", "test.my_mul", b, c);
            dist.backwardAsync(context.id(), List.of(d.sum()), false, DistAutograd.Mode.SMART)
                    .await(20, TimeUnit.SECONDS);
            Map<Tensor, Tensor> grads = dist.getGradients(context.id());
            Golden.close(Tensor.ones(3, 3), grads.get(a), "d loss / d a");
            Golden.close(Tensor.ones(3, 3), grads.get(b), "d loss / d b, as in one process");
            assertNull(grads.get(c), "c does not reach the loss");
        }
        contextsGoneEverywhere();
    }

    @Test
    void smartModePrunesAnUnusedRpcTwoWorkersAway() throws Exception {
        // worker1 sends x + 1 and y to worker2 twice and uses one result: FAST mode counts the other send, which
        // never gets a gradient, so it fails naming it; SMART mode prunes it.
        RpcAgent w0 = start(3).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor x = Tensor.rand(4).requiresGrad(true);
        Tensor y = Tensor.rand(4).requiresGrad(true);
        Local local = Local.of(x, y, (a, b) -> a.add(1.0).mul(b).sum());
        for (DistAutograd.Mode mode : DistAutograd.Mode.values()) {
            try (DistAutograd.Context context = dist.context()) {
                Tensor z = w0.rpcSync("worker1", "test.relayWithUnused", x, y);
                if (mode == DistAutograd.Mode.SMART) {
                    dist.backward(context.id(), List.of(z.sum()), false, mode);
                    Map<Tensor, Tensor> grads = dist.getGradients(context.id());
                    Golden.close(local.gradA(), grads.get(x), "SMART: d loss / d x");
                    Golden.close(local.gradB(), grads.get(y), "SMART: d loss / d y");
                } else {
                    // The unfed send is worker1's, two workers away from the one that started the pass.
                    DistAutogradException e = assertThrows(DistAutogradException.class,
                            () -> dist.backward(context.id(), List.of(z.sum()), false, mode));
                    assertTrue(e.getMessage().contains("the arguments of 'test.my_add' to worker2 (rank 2) (recorded"
                            + " on worker1 (rank 1))"), e.getMessage());
                    assertNull(dist.getGradients(context.id()).get(x), "FAST: x + 1 waits for the unused send");
                }
            }
        }
        contextsGoneEverywhere();
    }

    @Test
    void smartModeMatchesFastModeWhenEveryRpcReachesTheLoss() throws Exception {
        RpcAgent w0 = start(3).get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor x = Tensor.rand(4).requiresGrad(true);
        Tensor y = Tensor.rand(4).requiresGrad(true);
        Map<DistAutograd.Mode, Map<Tensor, Tensor>> got = new EnumMap<>(DistAutograd.Mode.class);
        for (DistAutograd.Mode mode : DistAutograd.Mode.values()) {
            try (DistAutograd.Context context = dist.context()) {
                Tensor z = w0.rpcSync("worker1", "test.relay", x, y);
                dist.backwardAsync(context.id(), List.of(z.mul(z).sum()), false, mode)
                        .await(20, TimeUnit.SECONDS);
                got.put(mode, dist.getGradients(context.id()));
            }
        }
        Golden.close(got.get(DistAutograd.Mode.FAST).get(x), got.get(DistAutograd.Mode.SMART).get(x), "x");
        Golden.close(got.get(DistAutograd.Mode.FAST).get(y), got.get(DistAutograd.Mode.SMART).get(y), "y");
        contextsGoneEverywhere();
    }

    @Test
    void aPeerOutsideAContextCanNeitherFeedNorReleaseIt() throws Exception {
        RpcWorkers w = start(3);
        RpcAgent w0 = w.get(0);
        RpcAgent outsider = w.get(2);
        DistAutograd dist = w0.distAutograd();
        Tensor x = Tensor.rand(4).requiresGrad(true);
        Tensor y = Tensor.rand(4).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor z = w0.rpcSync("worker1", "test.my_mul", x, y);
            long id = context.id();
            long firstMessage = 0L;
            List<String> refused = new ArrayList<>();
            for (var attempt : List.<Supplier<Future<Object>>>of(
                    () -> outsider.rpcAsync("worker1", "tensorbus.dist_autograd.release", id),
                    () -> outsider.rpcAsync("worker0", "tensorbus.dist_autograd.propagate", id, firstMessage, 1L,
                            false, List.of(Tensor.ones(4))),
                    () -> outsider.rpcAsync("worker1", "tensorbus.dist_autograd.propagate", (2L << 48) | 77, 5L, 1L,
                            false, List.of(Tensor.ones(4))),
                    () -> outsider.rpcAsync("worker1", "tensorbus.dist_autograd.release", 500L << 48),
                    () -> w.get(1).rpcAsync("worker0", "tensorbus.dist_autograd.release", id))) {
                Throwable e = attempt.get().toCompletionStage().toCompletableFuture().handle((v, t) -> t).get();
                assertTrue(e != null, "refused");
                refused.add(e.getMessage());
            }
            assertTrue(refused.get(0).contains("may not release distributed autograd context 0:0"), refused.get(0));
            assertTrue(refused.get(1).contains("which went to worker worker1"), refused.get(1));
            assertTrue(refused.get(2).contains("no distributed autograd context 2:77"), refused.get(2));
            assertTrue(refused.get(3).contains("no worker 500 in a job of 3"), refused.get(3));
            assertTrue(refused.get(4).contains("whose user closes it"), "only the initiator's user: " + refused.get(4));
            assertEquals(1L, w.get(1).distAutograd().debugInfo().get("num_current_contexts"), "untouched");
            assertEquals(0L, outsider.distAutograd().debugInfo().get("num_current_contexts"), "none was made");
            dist.backward(context.id(), List.of(z.sum()));
            Golden.close(y, dist.getGradients(context.id()).get(x), "d sum(x * y) / d x, as if nobody had meddled");
        }
        contextsGoneEverywhere();
    }

    @Test
    void aLostWorkerFailsTheBackwardPassNamingItAndReleasesTheContextsItWasPartOf() throws Exception {
        RpcWorkers w = start(3);
        RpcAgent w0 = w.get(0);
        DistAutograd dist = w0.distAutograd();
        Tensor x = Tensor.rand(4).requiresGrad(true);
        Tensor y = Tensor.rand(4).requiresGrad(true);
        try (DistAutograd.Context context = dist.context()) {
            Tensor z = w0.rpcSync("worker1", "test.relay", x, y);
            assertEquals(1L, w.get(2).distAutograd().debugInfo().get("num_current_contexts"));
            w.get(1).shutdown(false);
            // worker2 got the context from worker1 alone: it learns of the loss from its connection.
            RpcWorkers.eventually(() -> w.get(2).distAutograd().debugInfo().get("num_current_contexts") == 0,
                    "worker2 released the context of a lost worker's graph");
            long start = System.nanoTime();
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> dist.backward(context.id(), List.of(z.sum())));
            assertTrue(e.getMessage().contains("worker1"), e.getMessage());
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(20).toNanos(), "within the timeout");
        }
        assertEquals(0L, w0.distAutograd().debugInfo().get("num_current_contexts"));
    }

    @Test
    void theContextsOfASilentInitiatorExpireOnTheOtherWorkers() throws Exception {
        RpcWorkers w = start(2, Duration.ofSeconds(1));
        RpcAgent w0 = w.get(0);
        DistAutograd dist = w0.distAutograd();
        try (DistAutograd.Context context = dist.context()) {
            w0.<Tensor>rpcSync("worker1", "test.my_add", Tensor.rand(2).requiresGrad(true), Tensor.ones(2));
            // No message of the context for two timeouts: worker1 lets it go (the refusal of the later call below
            // shows it had it); the initiator's stays its user's.
            RpcWorkers.eventually(() -> w.get(1).distAutograd().debugInfo().get("num_current_contexts") == 0,
                    "worker1 released the idle context");
            assertEquals(1L, dist.debugInfo().get("num_current_contexts"));
            RuntimeException late = assertThrows(RuntimeException.class,
                    () -> w0.rpcSync("worker1", "test.my_add", Tensor.rand(2).requiresGrad(true), Tensor.ones(2)));
            assertTrue(late.getMessage().contains("was released on worker 1"), late.getMessage());
        }
        contextsGoneEverywhere();
    }

    private void contextsGoneEverywhere() throws InterruptedException {
        for (RpcAgent a : workers.all()) {
            RpcWorkers.eventually(() -> a.distAutograd().debugInfo().get("num_current_contexts") == 0
                            && a.distAutograd().debugInfo().get("num_outstanding_rpcs") == 0,
                    a.self() + " released every context: " + a.distAutograd().debugInfo());
        }
    }
}
