package io.tensorbus.it;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One worker of {@link MultiJvmDistAutogradTest} ({@code worker<RANK>}). Modes (first argument):
 * <ul>
 *   <li>{@code killed} (3 workers): worker0 and worker2 each run a forward pass through worker1 inside a context
 *       of their own (worker0's goes on from worker1 to worker2); worker1 halts its JVM when the first gradient
 *       reaches it. Both survivors' backward passes fail; each prints {@code BACKWARD FAILED <seconds> <message>}
 *       and, once its own context is closed, {@code CONTEXTS 0} when no context is left on it.</li>
 *   <li>{@code meddle} (3 workers): worker0 runs a forward pass through worker1 in a context; worker2, outside
 *       it, asks worker1 to release it, feeds worker0 gradients of a send that went to worker1 and names a
 *       context of a worker outside the job; each is refused ({@code REFUSED <message>}), and worker0's backward
 *       pass then gives the gradients it would have given anyway ({@code GRADIENTS OK}). Then worker0 runs the
 *       seed's unused-RPC graph with builtins, {@code d = builtin.add(a, b)} and an unused {@code builtin.mul(b, c)}
 *       on worker1, backward from {@code d.sum()} in each mode: {@code FAST FAILED <seconds> <message>} and
 *       {@code SMART OK <true when a and b got ones and c nothing>}; then the builtins' chain of the golden file
 *       (issue 32: {@code f = (a + b) * c + 0.5} on worker1, {@code loss = (f * f).sum()}), whose gradients must
 *       be those of the same computation in one process ({@code BUILTINS OK true}, which DistAutogradTest ties to
 *       PyTorch's golden values).</li>
 *   <li>{@code late} (2 workers): worker0 closes its context while a call of it still runs on worker1; the call
 *       fails ({@code LATE <message>}), no context is left on either worker ({@code CONTEXTS 0}) and both shut
 *       down gracefully ({@code SHUTDOWN OK}).</li>
 * </ul>
 */
public final class DistAutogradFaultCheck {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private DistAutogradFaultCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int world = Integer.parseInt(Distributed.environment().get("WORLD_SIZE"));
        CountDownLatch signal = new CountDownLatch(1);
        CountDownLatch slowStarted = new CountDownLatch(1);
        RpcRegistry registry = new RpcRegistry()
                .register("it.relay", a -> {
                    Tensor shifted = ((Tensor) a.get(0)).add(1.0);
                    shifted.registerHook(g -> {
                        System.out.println("HALTING");
                        System.out.flush();
                        Runtime.getRuntime().halt(9);
                        return g;
                    });
                    return RpcAgent.current().rpcSync("worker2", "it.mul", shifted, a.get(1));
                })
                .register("it.mul", a -> ((Tensor) a.get(0)).mul((Tensor) a.get(1)))
                .register("it.double", a -> ((Tensor) a.get(0)).mul(2.0))
                .register("it.slow", a -> {
                    slowStarted.countDown();
                    Thread.sleep(1000);
                    return ((Tensor) a.get(0)).mul(2.0);
                })
                .register("it.signal", a -> {
                    signal.countDown();
                    return null;
                });
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry)
                .timeout(TIMEOUT).initTimeout(Duration.ofSeconds(60)).build()).await(60, TimeUnit.SECONDS);
        if (args[0].equals("killed")) {
            killed(agent, rank, signal);
        } else if (args[0].equals("meddle")) {
            meddle(agent, rank, signal);
        } else {
            late(agent, rank, slowStarted);
        }
        // Returns rather than exits: as a rank thread of one JVM (--ranks-as-threads), an exit would end them all.
        System.out.flush();
    }

    private static void killed(RpcAgent agent, int rank, CountDownLatch signal) throws Exception {
        if (rank == 1) {
            Thread.sleep(120_000);
            return;
        }
        DistAutograd dist = agent.distAutograd();
        try (DistAutograd.Context context = dist.context()) {
            Tensor x = Tensor.rand(4).requiresGrad(true);
            Tensor out = rank == 0 ? agent.rpcSync("worker1", "it.relay", x, Tensor.rand(4))
                    : agent.rpcSync("worker1", "it.double", x);
            if (rank == 0) {
                await(signal, "worker2's forward pass");
            } else {
                // worker0 starts the backward pass that kills worker1 once this forward pass is done...
                agent.rpcSync("worker0", "it.signal");
                await(signal, "worker0's backward pass");
            }
            long start = System.nanoTime();
            try {
                dist.backward(context.id(), List.of(out.sum()));
                System.out.println("UNEXPECTED BACKWARD OK");
            } catch (RuntimeException e) {
                System.out.printf("BACKWARD FAILED %.1f %s%n", (System.nanoTime() - start) / 1e9, e.getMessage());
            }
        }
        if (rank == 0) {
            // ... and lets worker2 start its own once it failed (outside the context, which worker2 released).
            agent.rpcSync("worker2", "it.signal");
        }
        expectNoContext(agent);
        agent.shutdown(false);
    }

    private static void meddle(RpcAgent agent, int rank, CountDownLatch signal) throws Exception {
        if (rank == 2) {
            await(signal, "worker0's forward pass");
            long context = 0L;
            List<Future<Object>> attempts = List.of(
                    agent.rpcAsync("worker1", "tensorbus.dist_autograd.release", context),
                    agent.rpcAsync("worker0", "tensorbus.dist_autograd.propagate", context, 0L, 1L, false,
                            List.of(Tensor.ones(4))),
                    agent.rpcAsync("worker1", "tensorbus.dist_autograd.propagate", 900L << 48, 0L, 1L, false,
                            List.of(Tensor.ones(4))));
            for (Future<Object> f : attempts) {
                try {
                    f.await(20, TimeUnit.SECONDS);
                    System.out.println("UNEXPECTED ACCEPTED");
                } catch (RuntimeException e) {
                    System.out.println("REFUSED " + e.getMessage());
                }
            }
            agent.rpcSync("worker0", "it.signal");
        } else if (rank == 0) {
            DistAutograd dist = agent.distAutograd();
            Tensor x = Tensor.rand(4).requiresGrad(true);
            Tensor y = Tensor.rand(4);
            try (DistAutograd.Context context = dist.context()) {
                Tensor z = agent.rpcSync("worker1", "it.mul", x, y);
                agent.rpcSync("worker2", "it.signal");
                await(signal, "worker2's meddling");
                dist.backward(context.id(), List.of(z.sum()));
                Tensor grad = dist.getGradients(context.id()).get(x);
                System.out.println(Arrays.equals(grad.toFloatArray(), y.toFloatArray())
                        ? "GRADIENTS OK" : "GRADIENTS WRONG " + grad + " for " + y);
            }
            unusedRpc(agent);
            builtinChain(agent);
        }
        expectNoContext(agent);
        agent.shutdown();
        System.out.println("SHUTDOWN OK");
    }

    private static void unusedRpc(RpcAgent agent) {
        DistAutograd dist = agent.distAutograd();
        Tensor a = Tensor.rand(3, 3).requiresGrad(true);
        Tensor b = Tensor.rand(3, 3).requiresGrad(true);
        Tensor c = Tensor.rand(3, 3).requiresGrad(true);
        for (DistAutograd.Mode mode : DistAutograd.Mode.values()) {
            try (DistAutograd.Context context = dist.context()) {
                Tensor d = agent.rpcSync("worker1", "builtin.add", a, b);
                agent.<Tensor>rpcSync("worker1", "builtin.mul", b, c);
                long start = System.nanoTime();
                try {
                    dist.backward(context.id(), List.of(d.sum()), false, mode);
                    Map<Tensor, Tensor> g = dist.getGradients(context.id());
                    System.out.println(mode + " OK " + (ones(g.get(a)) && ones(g.get(b)) && g.get(c) == null));
                } catch (RuntimeException e) {
                    System.out.printf("%s FAILED %.1f %s%n", mode, (System.nanoTime() - start) / 1e9, e.getMessage());
                }
            }
        }
    }

    private static void builtinChain(RpcAgent agent) {
        DistAutograd dist = agent.distAutograd();
        List<Tensor> abc = List.of(Tensor.rand(3, 3).requiresGrad(true), Tensor.rand(3, 3).requiresGrad(true),
                Tensor.rand(3, 3).requiresGrad(true));
        Map<Tensor, Tensor> grads;
        try (DistAutograd.Context context = dist.context()) {
            Tensor d = agent.rpcSync("worker1", "builtin.add", abc.get(0), abc.get(1));
            Tensor e = agent.rpcSync("worker1", "builtin.mul", d, abc.get(2));
            Tensor f = agent.rpcSync("worker1", "builtin.add", e, 0.5);
            dist.backward(context.id(), List.of(f.mul(f).sum()));
            grads = dist.getGradients(context.id());
        }
        List<Tensor> local = abc.stream().map(t -> t.detach().clone().requiresGrad(true)).toList();
        Tensor f = local.get(0).add(local.get(1)).mul(local.get(2)).add(0.5);
        f.mul(f).sum().backward();
        boolean same = true;
        for (int i = 0; i < 3; i++) {
            float[] want = local.get(i).grad().toFloatArray();
            Tensor got = grads.get(abc.get(i));
            same &= got != null && Arrays.equals(want, got.toFloatArray());
        }
        System.out.println("BUILTINS OK " + same);
    }

    private static boolean ones(Tensor t) {
        return t != null && Arrays.equals(t.toFloatArray(), Tensor.ones(3, 3).toFloatArray());
    }

    private static void late(RpcAgent agent, int rank, CountDownLatch slowStarted) throws Exception {
        if (rank == 0) {
            Future<Tensor> late;
            try (DistAutograd.Context context = agent.distAutograd().context()) {
                late = agent.rpcAsync("worker1", "it.slow", Tensor.rand(4).requiresGrad(true));
            }
            try {
                late.await(20, TimeUnit.SECONDS);
                System.out.println("UNEXPECTED LATE OK");
            } catch (RuntimeException e) {
                System.out.println("LATE " + e.getMessage());
            }
        } else {
            // The call arrives, then the release while it runs; the result is dropped when it returns.
            await(slowStarted, "worker0's call");
        }
        expectNoContext(agent);
        agent.shutdown();
        System.out.println("SHUTDOWN OK");
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(60, TimeUnit.SECONDS)) {
            throw new AssertionError("waited 60 s for " + what);
        }
    }

    private static void expectNoContext(RpcAgent agent) throws InterruptedException {
        eventually(() -> agent.distAutograd().debugInfo().get("num_current_contexts") == 0);
        System.out.println("CONTEXTS 0");
    }

    private static void eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                System.out.println("CONTEXTS LEFT");
                return;
            }
            Thread.sleep(20);
        }
    }
}
