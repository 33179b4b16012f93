package io.tensorbus.distributed.optim;

import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * PyTorch's {@code _LocalOptimizer}: the optimizer of the parameters one worker owns, made there by a
 * {@link DistributedOptimizer} and stepped with a distributed autograd context's gradients. Steps of every local
 * optimizer of this process are serialised by one lock, as PyTorch's class-level lock, so concurrent distributed
 * optimizers over the same parameters never interleave their updates (the seed's 0x06).
 */
final class LocalOptimizer {
    private static final ReentrantLock STEPS = new ReentrantLock();
    private final Optimizer optimizer;

    LocalOptimizer(Optimizer optimizer) {
        this.optimizer = optimizer;
    }

    /** One step with {@code gradients} (a context's, by tensor identity); parameters without one are skipped. */
    void step(Map<Tensor, Tensor> gradients) {
        STEPS.lock();
        try {
            optimizer.step(gradients);
        } finally {
            STEPS.unlock();
        }
    }

    /** The optimizer's state, taken between steps. */
    OptimizerState stateDict() {
        STEPS.lock();
        try {
            return optimizer.stateDict();
        } finally {
            STEPS.unlock();
        }
    }

    /** Replaces the optimizer's state between steps. */
    void loadStateDict(OptimizerState state) {
        STEPS.lock();
        try {
            optimizer.loadStateDict(state);
        } finally {
            STEPS.unlock();
        }
    }
}
