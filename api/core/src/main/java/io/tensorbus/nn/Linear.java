package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/** {@code y = x W^T + b}, as {@code torch.nn.Linear}, with PyTorch's default initialisation. */
public final class Linear extends Module {
    private final int inFeatures;
    private final int outFeatures;
    private final Tensor weight;
    private final Tensor bias;

    /** A layer with bias, initialised from the default generator. */
    public Linear(int inFeatures, int outFeatures) {
        this(inFeatures, outFeatures, true, null);
    }

    /**
     * @param generator for the initial values (the default generator when null)
     * @throws IllegalArgumentException for sizes below 1
     */
    public Linear(int inFeatures, int outFeatures, boolean bias, Generator generator) {
        if (inFeatures < 1 || outFeatures < 1) {
            throw new IllegalArgumentException("Linear needs in_features and out_features >= 1, got " + inFeatures
                    + " and " + outFeatures);
        }
        this.inFeatures = inFeatures;
        this.outFeatures = outFeatures;
        this.weight = registerParameter("weight", Tensor.empty(DType.FLOAT32, outFeatures, inFeatures));
        Init.kaimingUniform(weight, Math.sqrt(5), Init.FanMode.FAN_IN, generator);
        if (bias) {
            double bound = 1 / Math.sqrt(inFeatures);
            this.bias = registerParameter("bias", Init.uniform(Tensor.empty(DType.FLOAT32, outFeatures), -bound, bound,
                    generator));
        } else {
            this.bias = null;
        }
    }

    /** The {@code [out, in]} weight. */
    public Tensor weight() {
        return weight;
    }

    /** The bias, or null. */
    public Tensor bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor x) {
        if (x.dim() == 0 || x.size(-1) != inFeatures) {
            throw new IllegalArgumentException(this + ": expected input [..., " + inFeatures + "], got "
                    + Shapes.str(x.shape()));
        }
        return Functional.linear(x, weight, bias);
    }

    @Override
    protected String extraRepr() {
        return "in_features=" + inFeatures + ", out_features=" + outFeatures + ", bias="
                + (bias != null ? "True" : "False");
    }
}
