package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RemoteException;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcException;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One worker of {@link MultiJvmRpcTest}, started by {@code tensorbus launch} (env:// rendezvous) as
 * {@code worker<RANK>}. Modes (first argument):
 * <ul>
 *   <li>{@code calls}: worker0 calls every other worker (sync, async, a tensor, a nested call through worker1
 *       to the last worker, an async function, a remote exception), makes a value on worker1 with
 *       {@code remote}, shares its RRef with the last worker, calls a method of a remote object through a
 *       typed proxy, waits until worker1 owns nothing, then every worker shuts down gracefully and each
 *       prints {@code RPC OK worker<R>} when its RRef leak report is empty;</li>
 *   <li>{@code lost}: the last worker halts its JVM while worker0's call to it runs; worker0 prints
 *       {@code LOST <message>} and then checks that worker1 still answers ({@code STILL OK}).</li>
 * </ul>
 */
public final class RpcCheck {
    /** A remote object for the typed proxy. */
    public interface Adder {
        long add(long x);
    }

    private RpcCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int world = Integer.parseInt(Distributed.environment().get("WORLD_SIZE"));
        AtomicReference<RpcAgent> self = new AtomicReference<>();
        String last = "worker" + (world - 1);
        RpcRegistry registry = new RpcRegistry()
                .register("it.whoami", a -> "worker" + rank)
                .register("it.relay", a -> self.get().rpcSync(last, "builtin.add", a.get(0), 100))
                .registerAsync("it.later", a -> self.get().rpcAsync(last, "it.whoami"))
                .register("it.fail", a -> {
                    throw new IllegalStateException("failing on purpose on worker" + rank);
                })
                // As the RPC tutorial writes it: the argument RRef is not closed; the call's end releases it.
                .register("it.fetchSum", a -> RpcCheck.<Tensor>rref(a.get(0)).toHere().sum().item())
                .register("it.owned", a -> self.get().debugInfo().get("num_owner_rrefs"))
                .register("it.adder", a -> (Adder) x -> x + rank)
                .register("it.halt", a -> {
                    System.out.println("HALTING");
                    System.out.flush();
                    Runtime.getRuntime().halt(9);
                    return null;
                });
        boolean sharedMemory = !List.of(args).contains("sharedMemory=false");
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry)
                .sharedMemory(sharedMemory).timeout(Duration.ofSeconds(30)).initTimeout(Duration.ofSeconds(60)).build())
                .await(60, TimeUnit.SECONDS);
        self.set(agent);
        if (args[0].equals("lost")) {
            lost(agent, rank, last);
        } else {
            if (rank == 0) {
                calls(agent, world, last);
                // Rank 0's connections (one to each callee at least) run through shared memory unless it is off.
                long shared = agent.debugInfo().get("num_shared_memory_connections");
                if (sharedMemory ? shared < world - 1 : shared != 0) {
                    throw new AssertionError(shared + " shared-memory connections with sharedMemory=" + sharedMemory);
                }
            }
            agent.shutdown();
            if (!agent.rrefLeaks().isEmpty()) {
                throw new AssertionError("RRefs leaked: " + agent.rrefLeaks());
            }
            // After a graceful shutdown nothing is held or pending: connections, calls, references.
            Map<String, Long> info = agent.debugInfo();
            for (String held : List.of("num_owner_rrefs", "num_user_rrefs", "num_pending_rref_messages",
                    "num_pending_calls", "num_shared_memory_connections")) {
                if (info.get(held) != 0) {
                    throw new AssertionError(held + " after shutdown on worker" + rank + ": " + info);
                }
            }
            System.out.println("RPC OK worker" + rank);
        }
        // Returns rather than exits: as a rank thread of one JVM (--ranks-as-threads), an exit would end them all.
        System.out.flush();
    }

    private static void calls(RpcAgent agent, int world, String last) throws Exception {
        List<Future<String>> names = new ArrayList<>();
        for (int r = 1; r < world; r++) {
            names.add(agent.rpcAsync(r, "it.whoami"));
        }
        for (int r = 1; r < world; r++) {
            expect("worker" + r, names.get(r - 1).await(30, TimeUnit.SECONDS));
        }
        Tensor sum = agent.rpcSync("worker1", "builtin.add", Tensor.ones(1000), Tensor.ones(1000));
        expect(2000.0, sum.sum().item());
        // Four times a ring each way: written while the callee reads, answered from a pool thread.
        Tensor big = Tensor.arange(0, 4 << 20, 1, DType.FLOAT32);
        Tensor back = agent.rpcSync("worker1", "builtin.echo", big);
        for (int i : new int[] {0, 12345, 1 << 20, (3 << 20) + 7, (4 << 20) - 1}) {
            expect(big.getDouble(i), back.getDouble(i));
        }
        expect(105L, agent.rpcSync("worker1", "it.relay", 5));
        expect(last, agent.rpcSync("worker1", "it.later"));
        try {
            agent.rpcSync(last, "it.fail");
            throw new AssertionError("it.fail did not fail");
        } catch (RemoteException e) {
            expect(last, e.worker());
            expect(IllegalStateException.class.getName(), e.remoteType());
        }
        rrefs(agent, last);
    }

    private static void rrefs(RpcAgent agent, String last) throws Exception {
        try (RRef<Tensor> r = agent.remote("worker1", "builtin.add", Tensor.ones(10), 1.0)) {
            expect(20.0, agent.rpcSync(last, "it.fetchSum", r));
            expect(20.0, r.toHere().sum().item());
        }
        try (RRef<Adder> adder = agent.remote("worker1", "it.adder")) {
            expect(6L, adder.rpcSync(Adder.class).add(5));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!agent.rpcSync("worker1", "it.owned").equals(0L)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("worker1 still owns RRefs after every user closed them");
            }
            Thread.sleep(20);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }

    private static void lost(RpcAgent agent, int rank, String last) throws Exception {
        if (rank != 0) {
            // Stay up (serving) until worker0 is done; the halted worker never gets here.
            Thread.sleep(60_000);
            return;
        }
        Future<Object> dying = agent.rpcAsync(last, "it.halt");
        try {
            dying.await(20, TimeUnit.SECONDS);
            System.out.println("UNEXPECTED OK");
        } catch (RpcException e) {
            System.out.println("LOST " + e.getMessage());
        }
        expect("worker1", agent.rpcSync("worker1", "it.whoami"));
        System.out.println("STILL OK");
        agent.shutdown(false);
    }

    private static void expect(Object expected, Object actual) {
        if (!expected.equals(actual)) {
            throw new AssertionError("expected " + expected + " but got " + actual);
        }
    }
}
