package io.tensorbus.workloads.examples;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The seed's remote-reference example, parameter-server style, for 3 or more workers: worker0 makes a
 * random tensor on worker1 with {@code remote}, passes the RRef on to worker2, which fetches the value with
 * {@code toHere}; then worker1 hosts a parameter server object that every other worker trains through a
 * typed proxy of its RRef ({@code ps.rpcSync(ParameterServer.class).step(gradient)}), fitting the
 * parameters to a target. Every RRef is closed, so worker1 owns nothing at the end.
 *
 * <pre>tensorbus launch --nproc-per-node 3 io.tensorbus.workloads.examples.ParameterServerExample</pre>
 */
public final class ParameterServerExample {
    /** Steps each trainer takes. */
    static final int STEPS = 25;

    /** The remote object: parameters and the SGD step that updates them. */
    public interface ParameterServer {
        /** A copy of the current parameters. */
        Tensor parameters();

        /** Applies one gradient; returns how many steps the server has taken in all. */
        long step(Tensor gradient);
    }

    /** Plain SGD; calls from several trainers are applied one at a time. */
    static final class SgdServer implements ParameterServer {
        private final Tensor parameters;
        private final double lr;
        private long steps;

        SgdServer(Tensor initial, double lr) {
            this.parameters = initial.clone();
            this.lr = lr;
        }

        @Override
        public synchronized Tensor parameters() {
            return parameters.clone();
        }

        @Override
        public synchronized long step(Tensor gradient) {
            try (var ignored = Autograd.noGrad()) {
                parameters.subi(gradient.mul(lr));
            }
            return ++steps;
        }
    }

    /** What worker0 saw. */
    public record Result(double sumOnWorker0, double sumOnWorker2, Tensor parameters, long steps) {
    }

    private ParameterServerExample() {
    }

    /** The functions every worker serves. */
    public static RpcRegistry registry() {
        return new RpcRegistry()
                .register("ps.randomTensor", a -> Tensor.rand(new Generator(42), DType.FLOAT32, 3, 3))
                .register("ps.fetchSum", a -> {
                    try (RRef<Tensor> r = rref(a.get(0))) {
                        return r.toHere().sum().item();
                    }
                })
                .register("ps.server", a -> new SgdServer((Tensor) a.get(0), ((Number) a.get(1)).doubleValue()))
                .register("ps.train", a -> {
                    try (RRef<ParameterServer> ps = rref(a.get(0))) {
                        return train(ps, (Tensor) a.get(1), ((Number) a.get(2)).intValue());
                    }
                });
    }

    /** One trainer: fetch the parameters, step along the gradient of the squared distance to the target. */
    static double train(RRef<ParameterServer> ps, Tensor target, int steps) {
        ParameterServer server = ps.rpcSync(ParameterServer.class);
        double loss = 0;
        for (int i = 0; i < steps; i++) {
            Tensor diff = server.parameters().sub(target);
            loss = diff.pow(2).sum().item();
            server.step(diff.mul(2.0 / diff.numel()));
        }
        return loss;
    }

    /** Joins the job through {@code env://} as {@code worker<RANK>}; worker0 runs the example, all shut down. */
    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int world = Integer.parseInt(Distributed.environment().get("WORLD_SIZE"));
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry()).build())
                .await(120, TimeUnit.SECONDS);
        try {
            if (rank == 0) {
                run(agent, System.out);
            }
        } finally {
            agent.shutdown();
        }
    }

    /**
     * worker0's part: prints what each step saw and returns it.
     *
     * @throws IllegalArgumentException with fewer than 3 workers
     */
    public static Result run(RpcAgent agent, PrintStream out) {
        int world = agent.workers().size();
        if (world < 3) {
            throw new IllegalArgumentException("the example needs 3 or more workers, got " + world);
        }
        double here;
        double there;
        try (RRef<Tensor> r = agent.remote("worker1", "ps.randomTensor")) {
            here = r.toHere().sum().item();
            there = agent.rpcSync("worker2", "ps.fetchSum", r);
        }
        out.printf("worker0 made a 3x3 tensor on worker1 with remote; worker2 fetched it through the RRef: sum %.4f"
                + " (worker0 sees %.4f)%n", there, here);
        Tensor target = Tensor.of(new float[] {1, 2, 3, 4}, 4);
        try (RRef<ParameterServer> ps = agent.remote("worker1", "ps.server", Tensor.zeros(4), 0.5)) {
            List<Future<Double>> losses = new ArrayList<>();
            for (int w = 0; w < world; w++) {
                if (w != 1) {
                    losses.add(agent.rpcAsync(w, "ps.train", ps, target, STEPS));
                }
            }
            // Each call has its own timeout (the agent's default), so this wait ends.
            Future.all(losses).toCompletionStage().toCompletableFuture().join();
            ParameterServer server = ps.rpcSync(ParameterServer.class);
            Tensor p = server.parameters();
            long steps = server.step(Tensor.zeros(4));
            out.printf("%d trainers took %d steps on the parameter server on worker1: parameters %s (target %s)%n",
                    losses.size(), steps - 1, p, target);
            return new Result(here, there, p, steps - 1);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }
}
