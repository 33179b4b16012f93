package io.tensorbus.it;

import io.tensorbus.distributed.Distributed;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One process of {@link MultiJvmPipelineTest} ({@code worker<RANK>}): worker0 trains a two-stage pipeline whose
 * stages live on worker1 and worker2 under the schedule named by the first argument; worker2's stage halts its JVM
 * in the forward pass of the second step. worker0 prints {@code STEP 1 OK}, then {@code STEP FAILED <seconds>
 * <message>}; worker0 and worker1 print {@code CONTEXTS 0} once no distributed autograd context is left on them.
 */
public final class PipelineFaultCheck {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** A stage that doubles its input, and halts the JVM on its {@code haltAt}-th micro-batch. */
    static final class Halting extends Module {
        private final AtomicInteger calls = new AtomicInteger();
        private final int haltAt;

        Halting(int haltAt) {
            this.haltAt = haltAt;
        }

        @Override
        public Tensor forward(Tensor x) {
            if (calls.incrementAndGet() == haltAt) {
                System.out.println("HALTING");
                System.out.flush();
                Runtime.getRuntime().halt(9);
            }
            return x.mul(2.0);
        }
    }

    private PipelineFaultCheck() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int micro = 2;
        CountDownLatch done = new CountDownLatch(1);
        RpcRegistry registry = new RpcRegistry()
                .register("it.pipe.done", a -> {
                    done.countDown();
                    return null;
                })
                .register("it.pipe.linear", a -> new Linear(4, 4, true, new Generator(1)))
                .register("it.pipe.halting", a -> new Halting(micro + 1));
        RpcAgent agent = Rpc.init("worker" + rank, rank, 3, RpcOptions.builder().registry(registry).timeout(TIMEOUT)
                .initTimeout(Duration.ofSeconds(60)).build()).await(60, TimeUnit.SECONDS);
        if (rank == 0) {
            train(agent, Pipeline.Schedule.valueOf(args[0]), micro);
            agent.rpcSync("worker1", "it.pipe.done");
        } else if (!done.await(rank == 1 ? 90 : 120, TimeUnit.SECONDS)) {
            System.out.println("worker0 never said it was done");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (agent.distAutograd().debugInfo().get("num_current_contexts") != 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.println("CONTEXTS " + agent.distAutograd().debugInfo().get("num_current_contexts"));
        // Returns rather than exits: as a rank thread of one JVM (--ranks-as-threads), an exit would end them all.
        System.out.flush();
    }

    private static void train(RpcAgent agent, Pipeline.Schedule schedule, int micro) {
        List<RRef<Module>> stages = List.of(agent.remote("worker1", "it.pipe.linear"),
                agent.remote("worker2", "it.pipe.halting"));
        try (Pipeline pipe = Pipeline.of(agent, stages, micro, schedule)) {
            List<RRef<Tensor>> params = pipe.parameterRRefs();
            try (DistributedOptimizer opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(0.1), params)) {
                Tensor x = Tensor.rand(8, 4);
                Pipeline.Loss mse = (o, t) -> Functional.mseLoss(o, t, Reduction.MEAN);
                pipe.trainStep(x, Tensor.zeros(8, 4), mse, opt);
                System.out.println("STEP 1 OK");
                long start = System.nanoTime();
                try {
                    pipe.trainStep(x, Tensor.zeros(8, 4), mse, opt);
                    System.out.println("UNEXPECTED STEP 2 OK");
                } catch (RuntimeException e) {
                    System.out.printf("STEP FAILED %.1f %s%n", (System.nanoTime() - start) / 1e9, e.getMessage());
                }
            }
            params.forEach(RRef::close);
        }
    }
}
