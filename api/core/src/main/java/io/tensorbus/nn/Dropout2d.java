package io.tensorbus.nn;

import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/**
 * Channel dropout as a layer (whole channels of {@code [N, C, H, W]} zeroed), active in training mode only,
 * as {@code torch.nn.Dropout2d}.
 */
public final class Dropout2d extends DropoutLayer {
    /** Channel dropout with probability {@code p}, from the default generator. */
    public Dropout2d(double p) {
        this(p, null);
    }

    /**
     * @param generator the random source (the default generator when null), for reproducible runs
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 1]}
     */
    public Dropout2d(double p, Generator generator) {
        super(p, generator);
    }

    @Override
    public Tensor forward(Tensor x) {
        return Functional.dropout2d(x, p, isTraining(), generator);
    }
}
