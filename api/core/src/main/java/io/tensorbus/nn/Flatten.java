package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** Flattens dimensions {@code startDim..endDim} (default 1..-1, keeping the batch), as {@code torch.nn.Flatten}. */
public final class Flatten extends Module {
    private final int startDim;
    private final int endDim;

    /** Flattens everything but the batch dimension. */
    public Flatten() {
        this(1, -1);
    }

    /** Flattens {@code startDim..endDim}; negative dimensions count from the end. */
    public Flatten(int startDim, int endDim) {
        this.startDim = startDim;
        this.endDim = endDim;
    }

    @Override
    public Tensor forward(Tensor x) {
        return x.flatten(startDim, endDim);
    }

    @Override
    protected String extraRepr() {
        return "start_dim=" + startDim + ", end_dim=" + endDim;
    }
}
