package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Sequential;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One worker of {@code tensorbus bench dist-autograd}, started by {@link DistAutogradBench} through the launcher:
 * joins the RPC job through {@code env://} as {@code worker<RANK>}; worker0 runs the anchor's steps against
 * worker1 and prints the lines, then both shut down gracefully.
 */
public final class DistAutogradBenchWorker {
    static final String MY_ADD = "bench.my_add";
    static final String STAGE_NEW = "bench.stage.new";
    static final String STAGE_FORWARD = "bench.stage.forward";
    static final String STAGE_PARAMS = "bench.stage.params";

    private DistAutogradBenchWorker() {
    }

    /** Runs this worker (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) throws Exception {
        DistAutogradBench.Options options = DistAutogradBench.Options.parse(List.of(args));
        Threads.set(1);
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        RpcAgent agent = Rpc.init("worker" + rank, rank, Integer.parseInt(Distributed.environment().get("WORLD_SIZE")),
                RpcOptions.builder().registry(registry()).numWorkerThreads(8)
                        .timeout(MultiProcessBench.OPERATION_TIMEOUT).build())
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

    /** The anchor's functions: {@code my_add}, and the MLP's second stage, owned by worker1. */
    @SuppressWarnings("unchecked")
    static RpcRegistry registry() {
        return new RpcRegistry()
                .register(MY_ADD, a -> ((Tensor) a.get(0)).add((Tensor) a.get(1)))
                .register(STAGE_NEW, a -> new Sequential(new Linear(1024, 1024, true, new Generator(1)), new ReLU(),
                        new Linear(1024, 10, true, new Generator(1))))
                .register(STAGE_FORWARD, a -> {
                    try (RRef<Tensor> input = (RRef<Tensor>) a.get(1)) {
                        return stage(a).forward(input.toHere());
                    }
                })
                .register(STAGE_PARAMS, a -> {
                    List<RRef<Tensor>> out = new ArrayList<>();
                    stage(a).parameters().forEach(p -> out.add(RRef.of(RpcAgent.current(), p)));
                    return out;
                });
    }

    @SuppressWarnings("unchecked")
    private static Module stage(List<Object> args) {
        return ((RRef<Module>) args.get(0)).localValue();
    }

    private static void measure(RpcAgent agent, DistAutogradBench.Options options) {
        for (DistAutograd.Mode mode : DistAutograd.Mode.values()) {
            String suffix = mode == DistAutograd.Mode.FAST ? "" : "-smart";
            for (int n : new int[] {3, 1024}) {
                SeedStep step = new SeedStep(agent, n, mode);
                // The JIT's warm-up on each size: a 3x3 step never runs the vector loops of the large one.
                int warmups = 10 + (n == 3 ? options.jitWarmup() : options.jitWarmup() / 10);
                double s = MultiProcessBench.medianSeconds(warmups, n == 3 ? 300 : 20, () -> { }, step::run);
                MultiProcessBench.report(new Measurement("dist-autograd", "step" + suffix).with("n", n)
                        .with("step_us", s * 1e6, 0));
                step.close();
            }
            double mlp = mlpStep(agent, mode, options.jitWarmup() > 0 ? 10 : 0);
            MultiProcessBench.report(new Measurement("dist-autograd", "mlp" + suffix).with("batch", 64)
                    .with("step_ms", mlp * 1e3, 2));
        }
    }

    /** The seed's step over n x n tensors held by worker0. */
    private static final class SeedStep {
        private final RpcAgent agent;
        private final DistAutograd.Mode mode;
        private final Tensor t1;
        private final Tensor t2;
        private final Tensor t4;
        private final List<RRef<Tensor>> params;
        private final DistributedOptimizer opt;

        SeedStep(RpcAgent agent, int n, DistAutograd.Mode mode) {
            this.agent = agent;
            this.mode = mode;
            Generator g = new Generator(0);
            t1 = Tensor.rand(g, DType.FLOAT32, n, n).requiresGrad(true);
            t2 = Tensor.rand(g, DType.FLOAT32, n, n).requiresGrad(true);
            t4 = Tensor.rand(g, DType.FLOAT32, n, n).requiresGrad(true);
            params = List.of(RRef.of(agent, t1), RRef.of(agent, t2), RRef.of(agent, t4));
            opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(0.05), params);
        }

        void run() {
            DistAutograd dist = agent.distAutograd();
            try (DistAutograd.Context context = dist.context()) {
                Tensor t3 = agent.rpcSync("worker1", MY_ADD, t1, t2);
                Tensor loss = t3.mul(t4).sum();
                backward(dist, context.id(), loss, mode);
                dist.getGradients(context.id());
                opt.step(context.id());
            }
        }

        void close() {
            opt.close();
            params.forEach(RRef::close);
        }
    }

    /** The anchor's MLP: 40 steps, the median of the last 30 (after {@code extra} more untimed ones). */
    private static double mlpStep(RpcAgent agent, DistAutograd.Mode mode, int extra) {
        DistAutograd dist = agent.distAutograd();
        RRef<Module> stage = agent.remote("worker1", STAGE_NEW);
        Linear first = new Linear(784, 1024, true, new Generator(2));
        List<RRef<Tensor>> params = new ArrayList<>();
        first.parameters().forEach(p -> params.add(RRef.of(agent, p)));
        params.addAll(agent.<List<RRef<Tensor>>>rpcSync("worker1", STAGE_PARAMS, stage));
        Generator g = new Generator(3);
        Tensor x = Tensor.randn(g, DType.FLOAT32, 64, 784);
        Tensor y = Tensor.randint(g, 0, 10, 64);
        try (DistributedOptimizer opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(0.01), params)) {
            return MultiProcessBench.medianSeconds(10 + extra, 30, () -> { }, () -> {
                try (DistAutograd.Context context = dist.context()) {
                    Tensor h = Functional.relu(first.forward(x));
                    Tensor out;
                    try (RRef<Tensor> input = RRef.of(agent, h)) {
                        out = agent.rpcSync("worker1", STAGE_FORWARD, stage, input);
                    }
                    backward(dist, context.id(), Functional.crossEntropy(out, y), mode);
                    opt.step(context.id());
                }
            });
        } finally {
            params.forEach(RRef::close);
            stage.close();
        }
    }

    private static void backward(DistAutograd dist, long id, Tensor loss, DistAutograd.Mode mode) {
        dist.backward(id, List.of(loss), false, mode);
    }
}
