package io.tensorbus.autograd;

import io.tensorbus.tensor.Tensor;

/**
 * The node at the end of every path to a leaf tensor that requires grad: it adds the arriving gradient
 * into the leaf's {@code .grad}. Its post-hooks run after {@code .grad} is updated, which is where
 * DistributedDataParallel learns that a parameter's gradient is ready.
 */
public final class AccumulateGrad extends Node {
    private final Tensor variable;

    /** Creates the accumulator of a leaf; {@link Tensor} creates one per leaf and reuses it. */
    public AccumulateGrad(Tensor variable) {
        super(new Edge[0], 1);
        this.variable = variable;
    }

    /** The leaf tensor this node accumulates into. */
    public Tensor variable() {
        return variable;
    }

    @Override
    public String name() {
        return "AccumulateGrad";
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        Tensor g = gradOutputs[0];
        if (g != null) {
            accumulate(variable, g);
        }
        return new Tensor[0];
    }

    /**
     * Adds {@code grad} into {@code variable.grad()} in place, or sets a private copy when there is none.
     * Runs without recording.
     */
    static void accumulate(Tensor variable, Tensor grad) {
        // One lock per leaf, as PyTorch: backward passes may run on several threads at once.
        synchronized (variable) {
            accumulateLocked(variable, grad);
        }
    }

    private static void accumulateLocked(Tensor variable, Tensor grad) {
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            Tensor g = grad.dtype() == variable.dtype() ? grad : grad.to(variable.dtype());
            Tensor current = variable.grad();
            if (current == null) {
                variable.setGrad(g.detach().clone());
            } else {
                current.addi(g);
            }
        }
    }
}
