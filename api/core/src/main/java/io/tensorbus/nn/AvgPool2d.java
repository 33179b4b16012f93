package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** Average pooling as a layer, as {@code torch.nn.AvgPool2d} (padding counted in the divisor by default). */
public final class AvgPool2d extends Module {
    private final int[] kernel;
    private final int[] stride;
    private final int[] padding;
    private final boolean ceilMode;
    private final boolean countIncludePad;

    /** A square window with stride = kernel and no padding. */
    public AvgPool2d(int kernel) {
        this(kernel, kernel, 0, false, true);
    }

    /** A square window with the given stride and padding. */
    public AvgPool2d(int kernel, int stride, int padding, boolean ceilMode, boolean countIncludePad) {
        this.kernel = new int[] {kernel, kernel};
        this.stride = new int[] {stride, stride};
        this.padding = new int[] {padding, padding};
        this.ceilMode = ceilMode;
        this.countIncludePad = countIncludePad;
        Pooling.check("AvgPool2d", this.kernel, this.stride, this.padding);
    }

    @Override
    public Tensor forward(Tensor x) {
        return Functional.avgPool2d(Pooling.requireImage(this, x), kernel, stride, padding, ceilMode, countIncludePad);
    }

    @Override
    protected String extraRepr() {
        return "kernel_size=" + kernel[0] + ", stride=" + stride[0] + ", padding=" + padding[0];
    }
}
