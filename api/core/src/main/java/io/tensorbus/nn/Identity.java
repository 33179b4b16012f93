package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** Returns its input, as {@code torch.nn.Identity} (a placeholder where a block has no layer). */
public final class Identity extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x;
    }
}
