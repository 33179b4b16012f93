package io.tensorbus.nn;

import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/** Element-wise dropout as a layer, active in training mode only, as {@code torch.nn.Dropout}. */
public final class Dropout extends DropoutLayer {
    /** Dropout with probability {@code p}, from the default generator. */
    public Dropout(double p) {
        this(p, null);
    }

    /**
     * @param generator the random source (the default generator when null), for reproducible runs
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 1]}
     */
    public Dropout(double p, Generator generator) {
        super(p, generator);
    }

    @Override
    public Tensor forward(Tensor x) {
        return Functional.dropout(x, p, isTraining(), generator);
    }
}
