package io.tensorbus.optim;


import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;

/**
 * AdamW ({@code torch.optim.AdamW}): Adam with decoupled weight decay, PyTorch 1.13's update:
 * {@code p *= 1 - lr * weight_decay}; {@code m = b1 * m + (1 - b1) * grad};
 * {@code v = b2 * v + (1 - b2) * grad * grad}; with AMSGrad {@code vmax = max(vmax, v)} replaces {@code v}
 * below; {@code p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)}.
 *
 * <p>Options and defaults: {@code lr} 1e-3, {@code betas} [0.9, 0.999], {@code eps} 1e-8,
 * {@code weight_decay} 1e-2, {@code amsgrad} false, {@code maximize} false. State per parameter as
 * {@link Adam}'s.
 */
public final class AdamW extends AbstractAdam {
    /** PyTorch's default weight decay for AdamW. */
    public static final double DEFAULT_WEIGHT_DECAY = 1e-2;

    private AdamW(List<ParamGroup> groups, Map<String, Object> defaults) {
        super(groups, defaults);
    }

    /**
     * AdamW over {@code params} with PyTorch's defaults.
     *
     * @throws IllegalArgumentException when {@code params} is empty
     */
    public AdamW(List<Tensor> params) {
        this(List.of(singleGroup(params)), pytorchDefaults(DEFAULT_WEIGHT_DECAY));
    }

    /** A builder with PyTorch's defaults. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    boolean decoupledWeightDecay() {
        return true;
    }

    /** Builds an {@link AdamW}; see the class comment for the options and their defaults. */
    public static final class Builder extends AdamBuilder<Builder, AdamW> {
        private Builder() {
            super(pytorchDefaults(DEFAULT_WEIGHT_DECAY));
        }

        @Override
        protected AdamW create(List<ParamGroup> groups, Map<String, Object> defaults) {
            return new AdamW(groups, defaults);
        }
    }
}
