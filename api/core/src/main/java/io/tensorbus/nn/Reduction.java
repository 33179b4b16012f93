package io.tensorbus.nn;

/** How a loss combines the per-element losses, as PyTorch's {@code reduction=} argument. */
public enum Reduction {
    /** One loss per element. */
    NONE,
    /** The (weighted) mean: PyTorch's default. */
    MEAN,
    /** The sum. */
    SUM
}
