package io.tensorbus.optim;


import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;

/**
 * Adam ({@code torch.optim.Adam}) with PyTorch 1.13's update: {@code g = grad + weight_decay * p};
 * {@code m = b1 * m + (1 - b1) * g}; {@code v = b2 * v + (1 - b2) * g * g}; with AMSGrad
 * {@code vmax = max(vmax, v)} replaces {@code v} below; {@code p -= lr / (1 - b1^t) * m / (sqrt(v) /
 * sqrt(1 - b2^t) + eps)}, where {@code t} is the parameter's own step count.
 *
 * <p>Options and defaults: {@code lr} 1e-3, {@code betas} [0.9, 0.999], {@code eps} 1e-8,
 * {@code weight_decay} 0, {@code amsgrad} false, {@code maximize} false. State per parameter: {@code step}
 * (float32 scalar), {@code exp_avg}, {@code exp_avg_sq}, and {@code max_exp_avg_sq} with AMSGrad.
 */
public final class Adam extends AbstractAdam {
    private Adam(List<ParamGroup> groups, Map<String, Object> defaults) {
        super(groups, defaults);
    }

    /**
     * Adam over {@code params} with PyTorch's defaults.
     *
     * @throws IllegalArgumentException when {@code params} is empty
     */
    public Adam(List<Tensor> params) {
        this(List.of(singleGroup(params)), pytorchDefaults(0.0));
    }

    /** A builder with PyTorch's defaults. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    boolean decoupledWeightDecay() {
        return false;
    }

    /** Builds an {@link Adam}; see the class comment for the options and their defaults. */
    public static final class Builder extends AdamBuilder<Builder, Adam> {
        private Builder() {
            super(pytorchDefaults(0.0));
        }

        @Override
        protected Adam create(List<ParamGroup> groups, Map<String, Object> defaults) {
            return new Adam(groups, defaults);
        }
    }
}
