package io.tensorbus.nn.models;

import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.nn.Conv2d;
import io.tensorbus.nn.Dropout2d;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/**
 * The network of the PyTorch distributed tutorial (and of PyTorch's MNIST example): conv 1->10 5x5, max
 * pool, conv 10->20 5x5 with channel dropout, max pool, fc 320->50, dropout, fc 50->10, log-softmax. It
 * takes {@code [N, 1, 28, 28]} images and returns log-probabilities of 10 classes; the parameter names
 * ({@code conv1}, {@code conv2}, {@code fc1}, {@code fc2}) match the tutorial's {@code Net}.
 */
public final class MnistNet extends Module {
    private final Conv2d conv1;
    private final Conv2d conv2;
    private final Dropout2d conv2Drop;
    private final Linear fc1;
    private final Linear fc2;
    private final Generator generator;

    /**
     * @param generator for the initial values and the dropout masks (the default generator when null)
     */
    public MnistNet(Generator generator) {
        this.generator = generator;
        this.conv1 = registerModule("conv1", new Conv2d(1, 10, new int[] {5, 5}, new int[] {1, 1},
                new int[] {0, 0}, new int[] {1, 1}, 1, true, generator));
        this.conv2 = registerModule("conv2", new Conv2d(10, 20, new int[] {5, 5}, new int[] {1, 1},
                new int[] {0, 0}, new int[] {1, 1}, 1, true, generator));
        this.conv2Drop = registerModule("conv2_drop", new Dropout2d(0.5, generator));
        this.fc1 = registerModule("fc1", new Linear(320, 50, true, generator));
        this.fc2 = registerModule("fc2", new Linear(50, 10, true, generator));
    }

    @Override
    public Tensor forward(Tensor x) {
        if (x.dim() != 4 || x.size(1) != 1 || x.size(2) != 28 || x.size(3) != 28) {
            throw new IllegalArgumentException("MnistNet: expected input [N, 1, 28, 28], got " + Shapes.str(x.shape()));
        }
        Tensor y = Functional.maxPool2d(conv1.forward(x), 2).relu();
        y = Functional.maxPool2d(conv2Drop.forward(conv2.forward(y)), 2).relu();
        y = fc1.forward(y.reshape(-1, 320)).relu();
        y = Functional.dropout(y, 0.5, isTraining(), generator);
        return fc2.forward(y).logSoftmax(1);
    }
}
