package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/** Mean squared error, as {@code torch.nn.MSELoss}. */
public final class MSELoss {
    private final Reduction reduction;

    /** Mean reduction. */
    public MSELoss() {
        this(Reduction.MEAN);
    }

    /** With a reduction. */
    public MSELoss(Reduction reduction) {
        this.reduction = Objects.requireNonNull(reduction, "reduction");
    }

    /** The loss of {@code input} against a {@code target} of the same shape. */
    public Tensor forward(Tensor input, Tensor target) {
        return Functional.mseLoss(input, target, reduction);
    }
}
