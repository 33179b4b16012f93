package io.tensorbus.parallel;

import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/**
 * A two-layer network with an optional third layer that forward uses only when {@link #useExtra} is set:
 * the test model of DistributedDataParallel's tests.
 */
public final class Mlp extends Module {
    final Linear fc1;
    final Linear fc2;
    final Linear extra;
    boolean useExtra;

    Mlp(long seed, int hidden, boolean withExtra) {
        Generator g = new Generator(seed);
        fc1 = registerModule("fc1", new Linear(8, hidden, true, g));
        fc2 = registerModule("fc2", new Linear(hidden, 4, true, g));
        extra = withExtra ? registerModule("extra", new Linear(4, 4, true, g)) : null;
    }

    /** The network with 16 hidden units and no extra layer, weights from {@code seed}. */
    public Mlp(long seed) {
        this(seed, 16, false);
    }

    @Override
    public Tensor forward(Tensor x) {
        Tensor y = fc2.forward(fc1.forward(x).relu());
        return useExtra ? extra.forward(y) : y;
    }
}
