package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;

/** Average pooling to a fixed output size, as {@code torch.nn.AdaptiveAvgPool2d}. */
public final class AdaptiveAvgPool2d extends Module {
    private final int outH;
    private final int outW;

    /**
     * @throws IllegalArgumentException for an output size below 1
     */
    public AdaptiveAvgPool2d(int outH, int outW) {
        if (outH < 1 || outW < 1) {
            throw new IllegalArgumentException("AdaptiveAvgPool2d: output size must be >= 1, got " + outH + "x" + outW);
        }
        this.outH = outH;
        this.outW = outW;
    }

    @Override
    public Tensor forward(Tensor x) {
        return Functional.adaptiveAvgPool2d(Pooling.requireImage(this, x), outH, outW);
    }

    @Override
    protected String extraRepr() {
        return "output_size=(" + outH + ", " + outW + ")";
    }
}
