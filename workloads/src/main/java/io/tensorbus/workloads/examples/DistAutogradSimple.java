package io.tensorbus.workloads.examples;

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
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The seed's end-to-end example of distributed autograd and the distributed optimizer
 * ({@code dist_autograd_simple.py}), on every worker at once: inside a context, make two random 3x3 tensors
 * that require grad on the next worker with {@code remote}, fetch both, add them, run the distributed backward
 * pass of the sum and step an SGD {@link DistributedOptimizer} (lr 0.05) over the two RRefs; the remote
 * tensors then sit 0.05 lower, as the gradient of a sum is one.
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.DistAutogradSimple</pre>
 */
public final class DistAutogradSimple {
    /** The function that makes the random tensors. */
    static final String RANDOM_TENSOR = "dist_autograd_simple.random_tensor";

    /** SGD's learning rate, as in the seed. */
    static final double LR = 0.05;

    /**
     * What one worker saw.
     *
     * @param before the two remote tensors before the step
     * @param after the two remote tensors after the step
     */
    public record Result(List<Tensor> before, List<Tensor> after) {
    }

    private DistAutogradSimple() {
    }

    /** The function every worker serves: {@code torch.rand((3, 3), requires_grad=True)}. */
    public static RpcRegistry registry(long seed) {
        Generator generator = new Generator(seed);
        return new RpcRegistry().register(RANDOM_TENSOR,
                a -> Tensor.rand(generator, DType.FLOAT32, 3, 3).requiresGrad(true));
    }

    /** Joins the job through {@code env://} as {@code worker<RANK>}, runs the example toward the next worker. */
    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(Distributed.environment().get("RANK"));
        int world = Integer.parseInt(Distributed.environment().get("WORLD_SIZE"));
        RpcAgent agent = Rpc.init("worker" + rank, rank, world, RpcOptions.builder().registry(registry(rank)).build())
                .await(120, TimeUnit.SECONDS);
        try {
            run(agent, "worker" + (rank + 1) % world, System.out);
        } finally {
            agent.shutdown();
        }
    }

    /**
     * The seed's {@code _run_process}: the forward pass through RRefs on {@code dst}, the distributed backward
     * pass and the optimizer step; prints what changed.
     */
    public static Result run(RpcAgent agent, String dst, PrintStream out) {
        DistAutograd dist = agent.distAutograd();
        try (RRef<Tensor> rref1 = agent.remote(dst, RANDOM_TENSOR);
             RRef<Tensor> rref2 = agent.remote(dst, RANDOM_TENSOR)) {
            List<Tensor> before;
            try (DistAutograd.Context context = dist.context()) {
                Tensor t1 = rref1.toHere();
                Tensor t2 = rref2.toHere();
                before = List.of(t1.detach().clone(), t2.detach().clone());
                Tensor loss = t1.add(t2);
                dist.backward(context.id(), List.of(loss.sum()));
                try (DistributedOptimizer optimizer = DistributedOptimizer.create(agent, OptimizerSpec.sgd(LR),
                        List.of(rref1, rref2))) {
                    optimizer.step(context.id());
                }
            }
            List<Tensor> after = List.of(rref1.toHere(), rref2.toHere());
            out.printf(Locale.ROOT, "%s: two random 3x3 tensors on %s, sums %.4f and %.4f; after the distributed"
                    + " backward pass and one SGD step (lr %s) on their owner: %.4f and %.4f%n", agent.self().name(),
                    dst, before.get(0).sum().item(), before.get(1).sum().item(), LR, after.get(0).sum().item(),
                    after.get(1).sum().item());
            return new Result(before, after);
        }
    }
}
