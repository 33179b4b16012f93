package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** Max pooling as a layer, as {@code torch.nn.MaxPool2d}; the stride defaults to the kernel size. */
public final class MaxPool2d extends Module {
    private final int[] kernel;
    private final int[] stride;
    private final int[] padding;
    private final boolean ceilMode;

    /** A square window with stride = kernel and no padding. */
    public MaxPool2d(int kernel) {
        this(kernel, kernel, 0, false);
    }

    /** A square window with the given stride and padding (checked at the first forward). */
    public MaxPool2d(int kernel, int stride, int padding, boolean ceilMode) {
        this.kernel = new int[] {kernel, kernel};
        this.stride = new int[] {stride, stride};
        this.padding = new int[] {padding, padding};
        this.ceilMode = ceilMode;
        Pooling.check("MaxPool2d", this.kernel, this.stride, this.padding);
    }

    @Override
    public Tensor forward(Tensor x) {
        return Functional.maxPool2d(Pooling.requireImage(this, x), kernel, stride, padding, ceilMode);
    }

    @Override
    protected String extraRepr() {
        return "kernel_size=" + kernel[0] + ", stride=" + stride[0] + ", padding=" + padding[0] + ", ceil_mode="
                + (ceilMode ? "True" : "False");
    }
}
