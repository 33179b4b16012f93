package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.WorkerInfo;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;

/**
 * Mutiny's view of a {@link DistributedOptimizer}: its creation on the parameters' owners, its step and its state
 * as lazy {@link Uni}s that start when subscribed, once per subscription. The optimizer stays the caller's to close.
 */
public final class UniDistributedOptimizer {
    private final DistributedOptimizer optimizer;

    /**
     * Wraps {@code optimizer}.
     *
     * @throws NullPointerException when {@code optimizer} is null
     */
    public UniDistributedOptimizer(DistributedOptimizer optimizer) {
        if (optimizer == null) {
            throw new NullPointerException("optimizer");
        }
        this.optimizer = optimizer;
    }

    /** {@link DistributedOptimizer#createAsync(RpcAgent, OptimizerSpec, List)}, wrapped. */
    public static Uni<UniDistributedOptimizer> create(RpcAgent agent, OptimizerSpec spec, List<RRef<Tensor>> params) {
        return UniProcessGroup.uni(() -> DistributedOptimizer.createAsync(agent, spec, params))
                .map(UniDistributedOptimizer::new);
    }

    /** The wrapped optimizer. */
    public DistributedOptimizer optimizer() {
        return optimizer;
    }

    /** {@link DistributedOptimizer#stepAsync(long)}. */
    public Uni<Void> step(long contextId) {
        return UniProcessGroup.uni(() -> optimizer.stepAsync(contextId));
    }

    /** {@link DistributedOptimizer#stateDictAsync()}. */
    public Uni<Map<WorkerInfo, OptimizerState>> stateDict() {
        return UniProcessGroup.uni(optimizer::stateDictAsync);
    }

    /** {@link DistributedOptimizer#loadStateDictAsync(Map)}. */
    public Uni<Void> loadStateDict(Map<WorkerInfo, OptimizerState> states) {
        return UniProcessGroup.uni(() -> optimizer.loadStateDictAsync(states));
    }
}
