package io.tensorbus.distributed.optim;

import io.tensorbus.distributed.algorithms.PeriodicModelAverager;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.ParamGroup;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Objects;

/**
 * {@code torch.distributed.optim.PostLocalSGDOptimizer}: steps a local optimizer, then lets a
 * {@link PeriodicModelAverager} average the model when its period comes round; with DDP's
 * {@code CommHooks.postLocalSGD} hook this is post-local SGD. Save {@link #averager()}'s step with the optimizer's
 * state dict (PyTorch keeps it in the dict under {@code step}) and restore it with {@code setStep}.
 */
public final class PostLocalSGDOptimizer {
    private final Optimizer optim;
    private final PeriodicModelAverager averager;

    /**
     * Wraps {@code optim} and {@code averager}.
     *
     * @throws NullPointerException when either is null
     */
    public PostLocalSGDOptimizer(Optimizer optim, PeriodicModelAverager averager) {
        this.optim = Objects.requireNonNull(optim, "optim");
        this.averager = Objects.requireNonNull(averager, "averager");
    }

    /** The wrapped optimizer ({@code optim}). */
    public Optimizer optimizer() {
        return optim;
    }

    /** The model averager. */
    public PeriodicModelAverager averager() {
        return averager;
    }

    /** The wrapped optimizer's parameter groups. */
    public List<ParamGroup> paramGroups() {
        return optim.paramGroups();
    }

    /**
     * Steps the wrapped optimizer, then averages the parameters over the averager's group if this step is due. Blocks
     * while it averages; every member must call it.
     */
    public void step() {
        optim.step();
        List<Tensor> params = optim.paramGroups().stream().flatMap(g -> g.params().stream()).toList();
        averager.averageParameters(params);
    }

    /** Zeroes the gradients in place ({@code zero_grad()}). */
    public void zeroGrad() {
        optim.zeroGrad();
    }

    /** Clears the gradients: dropped when {@code setToNull}, zeroed in place otherwise. */
    public void zeroGrad(boolean setToNull) {
        optim.zeroGrad(setToNull);
    }
}
