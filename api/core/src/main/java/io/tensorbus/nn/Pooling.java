package io.tensorbus.nn;

import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;

/** Argument and input checks shared by the pooling layers. */
final class Pooling {
    private Pooling() {
    }

    static void check(String layer, int[] kernel, int[] stride, int[] padding) {
        if (kernel[0] < 1 || stride[0] < 1 || padding[0] < 0 || padding[0] * 2 > kernel[0]) {
            throw new IllegalArgumentException(layer + ": kernel_size " + Arrays.toString(kernel) + " and stride "
                    + Arrays.toString(stride) + " must be >= 1, padding " + Arrays.toString(padding)
                    + " >= 0 and at most half the kernel");
        }
    }

    /** The input when it is {@code [N, C, H, W]} or {@code [C, H, W]}; otherwise an error naming the layer. */
    static Tensor requireImage(Module layer, Tensor x) {
        if (x.dim() != 3 && x.dim() != 4) {
            throw new IllegalArgumentException(layer + ": expected input [N, C, H, W] or [C, H, W], got "
                    + Shapes.str(x.shape()));
        }
        return x;
    }
}
