package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** {@code max(x, 0)} as a layer, as {@code torch.nn.ReLU}. */
public final class ReLU extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.relu();
    }
}
