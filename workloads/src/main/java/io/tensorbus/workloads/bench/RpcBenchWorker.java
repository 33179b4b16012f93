package io.tensorbus.workloads.bench;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One worker of {@code tensorbus bench rpc}, started by {@link RpcBench} through the launcher: joins the RPC
 * job through {@code env://} as {@code worker<RANK>}; worker0 measures calls to worker1 and prints the
 * lines, then both shut down gracefully.
 */
public final class RpcBenchWorker {
    /** The anchor's {@code add1}, run on the callee's pool as the anchor's is on TensorPipe's. */
    static final String ADD1 = "bench.add1";
    /** The same function registered to run on the callee's event loop ({@code RpcRegistry.registerOnEventLoop}). */
    static final String ADD1_ON_LOOP = "bench.add1OnLoop";

    private RpcBenchWorker() {
    }

    /** Runs this worker (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) throws Exception {
        RpcBench.Options options = RpcBench.Options.parse(List.of(args));
        Threads.set(1);
        RpcRegistry registry = new RpcRegistry().register(ADD1, a -> ((Number) a.get(0)).longValue() + 1)
                .registerOnEventLoop(ADD1_ON_LOOP, a -> ((Number) a.get(0)).longValue() + 1);
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        RpcAgent agent = Rpc.init("worker" + rank, rank, Integer.parseInt(Distributed.environment().get("WORLD_SIZE")),
                RpcOptions.builder().registry(registry).timeout(MultiProcessBench.OPERATION_TIMEOUT).build())
                .await(2, TimeUnit.MINUTES);
        try {
            if (rank == 0) {
                measure(agent, options);
            }
        } finally {
            agent.shutdown();
        }
        System.exit(0);
    }

    private static void measure(RpcAgent agent, RpcBench.Options options) throws Exception {
        // Warm both paths the measurements take: small calls, and tensors as attachments.
        Tensor small = Tensor.ones(1024);
        for (int i = 0; i < options.jitWarmup(); i++) {
            agent.rpcSync("worker1", ADD1, i);
            agent.rpcSync("worker1", ADD1_ON_LOOP, i);
            agent.rpcSync("worker1", "builtin.echo", small);
        }
        double rtt = MultiProcessBench.medianSeconds(20, 500, () -> { }, () -> agent.rpcSync("worker1", ADD1, 1));
        MultiProcessBench.report(new Measurement("rpc", "sync").with("rtt_us", rtt * 1e6, 1));
        double onLoop = MultiProcessBench.medianSeconds(20, 500, () -> { },
                () -> agent.rpcSync("worker1", ADD1_ON_LOOP, 1));
        MultiProcessBench.report(new Measurement("rpc", "sync_on_event_loop").with("rtt_us", onLoop * 1e6, 1));
        MultiProcessBench.report(new Measurement("rpc", "async").with("calls_per_s", asyncRate(agent), 0));
        for (long nbytes : RpcBench.SIZES) {
            if (nbytes <= options.maxBytes()) {
                Tensor t = Tensor.ones((int) (nbytes / 4));
                // The anchor's 3 warm-ups, and with the JIT warm-up on, 20 more: a fresh JVM compiles the
                // large-copy paths during the first echoes of each size.
                int warmups = 3 + (options.jitWarmup() > 0 ? 20 : 0);
                // Each echo in a memory scope: its result is given back when the call returns, as the anchor's
                // result is freed when nothing refers to it, instead of when a collection finds it.
                double echo = MultiProcessBench.medianSeconds(warmups, nbytes <= (1 << 20) ? 20 : 5, () -> { },
                        () -> {
                            try (MemoryScope scope = MemoryScope.open()) {
                                agent.rpcSync("worker1", "builtin.echo", t);
                            }
                        });
                MultiProcessBench.report(new Measurement("rpc", "echo").with("bytes", nbytes)
                        .with("rtt_us", echo * 1e6, 1).with("GBps", 2.0 * nbytes / echo / 1e9, 3));
            }
        }
        // With the JIT warm-up on, ten untimed rounds compile the RRef path as the echoes compile theirs.
        for (int i = 0; i < (options.jitWarmup() > 0 ? 10 : 0); i++) {
            remoteRate(agent);
        }
        double[] rates = new double[9];
        for (int i = 0; i < rates.length; i++) {
            rates[i] = remoteRate(agent);
        }
        Arrays.sort(rates);
        MultiProcessBench.report(new Measurement("rpc", "remote").with("per_s", rates[rates.length / 2], 0));
    }

    /**
     * The anchor's {@code remote} loop: 200 {@code remote} calls issued at once, then {@code toHere} of each in
     * turn; per second. The references are closed after the clock stops, as the anchor's die after its loop.
     */
    private static double remoteRate(RpcAgent agent) {
        long t0 = System.nanoTime();
        List<RRef<Long>> refs = new ArrayList<>(200);
        for (int i = 0; i < 200; i++) {
            refs.add(agent.remote("worker1", ADD1, i));
        }
        for (int i = 0; i < 200; i++) {
            if (refs.get(i).toHere() != i + 1) {
                throw new IllegalStateException("remote add1(" + i + ") gave " + refs.get(i).toHere());
            }
        }
        double rate = 200 / ((System.nanoTime() - t0) / 1e9);
        refs.forEach(RRef::close);
        // The next round starts once the owner has applied these DELETEs, as the anchor's one round starts clean.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (agent.debugInfo().get("num_pending_rref_messages") > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        return rate;
    }

    /** 5000 calls in flight at once, as the anchor's {@code rpc_async} loop: calls per second. */
    private static double asyncRate(RpcAgent agent) throws Exception {
        long t0 = System.nanoTime();
        List<Future<Long>> calls = new ArrayList<>(5000);
        for (int i = 0; i < 5000; i++) {
            calls.add(agent.rpcAsync("worker1", ADD1, i));
        }
        Future.all(calls).await(2, TimeUnit.MINUTES);
        return 5000 / ((System.nanoTime() - t0) / 1e9);
    }
}
