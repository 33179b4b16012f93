package io.tensorbus.it;

import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.Reduction;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One worker of {@link ShutdownTest} ({@code worker<RANK>}), written as README shows a program:
 * {@code try { ... } finally { agent.shutdown(); }} with the RPC agent's default five-minute shutdown timeout.
 * Modes (first argument):
 * <ul>
 *   <li>{@code pipeline} (3 workers): worker0 trains a two-stage pipeline (stages on worker1 and worker2) for ten
 *       steps, printing {@code STEP <n> OK}; worker2's stage halts its JVM in the third step's forward pass. The
 *       stage workers go straight to their shutdown, which waits for worker0's.</li>
 *   <li>{@code busy} (2 workers): worker0 prints {@code SHUTTING DOWN} and shuts down gracefully; worker1 sleeps,
 *       so worker0's shutdown waits until the test stops it.</li>
 * </ul>
 */
public final class ShutdownCheck {
    private ShutdownCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv("RANK"));
        int world = Integer.parseInt(System.getenv("WORLD_SIZE"));
        RpcRegistry registry = new RpcRegistry()
                .register("it.pipe.linear", a -> new Linear(4, 4, true, new Generator(1)))
                .register("it.pipe.halting", a -> new PipelineFaultCheck.Halting(5));
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry)
                .timeout(Duration.ofSeconds(30)).build()).await(60, TimeUnit.SECONDS);
        try {
            if (args[0].equals("pipeline") && rank == 0) {
                train(agent);
            } else if (args[0].equals("busy")) {
                if (rank == 0) {
                    System.out.println("SHUTTING DOWN");
                } else {
                    Thread.sleep(120_000);
                }
            }
        } finally {
            agent.shutdown();
        }
    }

    private static void train(RpcAgent agent) {
        List<RRef<Module>> stages = List.of(agent.remote("worker1", "it.pipe.linear"),
                agent.remote("worker2", "it.pipe.halting"));
        try (Pipeline pipe = Pipeline.of(agent, stages, 2, Pipeline.Schedule.GPIPE)) {
            List<RRef<Tensor>> params = pipe.parameterRRefs();
            try (DistributedOptimizer opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(0.1), params)) {
                Tensor x = Tensor.rand(8, 4);
                Pipeline.Loss mse = (o, t) -> Functional.mseLoss(o, t, Reduction.MEAN);
                for (int step = 1; step <= 10; step++) {
                    pipe.trainStep(x, Tensor.zeros(8, 4), mse, opt);
                    System.out.println("STEP " + step + " OK");
                }
            } finally {
                params.forEach(RRef::close);
            }
        }
    }
}
