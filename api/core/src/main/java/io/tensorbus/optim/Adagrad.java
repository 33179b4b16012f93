package io.tensorbus.optim;

import static io.tensorbus.optim.ParamGroup.EPS;
import static io.tensorbus.optim.ParamGroup.INITIAL_ACCUMULATOR_VALUE;
import static io.tensorbus.optim.ParamGroup.LR;
import static io.tensorbus.optim.ParamGroup.LR_DECAY;
import static io.tensorbus.optim.ParamGroup.MAXIMIZE;
import static io.tensorbus.optim.ParamGroup.WEIGHT_DECAY;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Adagrad ({@code torch.optim.Adagrad}) with PyTorch 1.13's update: {@code g = grad + weight_decay * p};
 * {@code clr = lr / (1 + (t - 1) * lr_decay)}; {@code sum += g * g}; {@code p -= clr * g / (sqrt(sum) + eps)},
 * where {@code t} is the parameter's own step count.
 *
 * <p>Options and defaults: {@code lr} 1e-2, {@code lr_decay} 0, {@code weight_decay} 0,
 * {@code initial_accumulator_value} 0, {@code eps} 1e-10, {@code maximize} false. State per parameter,
 * created as soon as its group is added (as PyTorch does in the constructor): {@code step} (float32 scalar,
 * 0) and {@code sum} (filled with the group's {@code initial_accumulator_value}).
 */
public final class Adagrad extends Optimizer {
    /** The state key of the running sum of squared gradients. */
    public static final String SUM = "sum";
    private static final Set<String> KEYS = keys(LR, LR_DECAY, WEIGHT_DECAY, INITIAL_ACCUMULATOR_VALUE, EPS, MAXIMIZE);

    private Adagrad(List<ParamGroup> groups, Map<String, Object> defaults) {
        super(groups, defaults);
    }

    /**
     * Adagrad over {@code params} with PyTorch's defaults.
     *
     * @throws IllegalArgumentException when {@code params} is empty
     */
    public Adagrad(List<Tensor> params) {
        this(List.of(singleGroup(params)), pytorchDefaults());
    }

    /** A builder with PyTorch's defaults. */
    public static Builder builder() {
        return new Builder();
    }

    private static Map<String, Object> pytorchDefaults() {
        return options(LR, 1e-2, LR_DECAY, 0.0, WEIGHT_DECAY, 0.0, INITIAL_ACCUMULATOR_VALUE, 0.0, EPS, 1e-10,
                MAXIMIZE, false);
    }

    @Override
    protected Set<String> optionKeys() {
        return KEYS;
    }

    @Override
    protected void validate(Map<String, Object> o) {
        requireNonNegative(o, LR, "learning rate");
        requireNonNegative(o, LR_DECAY, "lr_decay value");
        requireNonNegative(o, WEIGHT_DECAY, "weight_decay value");
        requireNonNegative(o, INITIAL_ACCUMULATOR_VALUE, "initial_accumulator_value value");
        requireNonNegative(o, EPS, "epsilon value");
    }

    @Override
    protected void groupAdded(ParamGroup group) {
        for (Tensor p : group.params()) {
            initState(group, p, stateOf(p));
        }
    }

    @Override
    protected void update(ParamGroup group, Tensor param, Tensor grad, Map<String, Tensor> state) {
        Tensor sum = initState(group, param, state);
        double step = incrementStep(state);
        Tensor g = withWeightDecay(grad, param, group.getDouble(WEIGHT_DECAY));
        double clr = group.lr() / (1 + (step - 1) * group.getDouble(LR_DECAY));
        sum.addi(g.mul(g));
        Tensor std = sum.sqrt().addi(group.getDouble(EPS));
        param.addi(g.div(std), -clr);
    }

    /** Creates the missing state entries ({@code step} 0, {@code sum} filled) and returns {@code sum}. */
    private static Tensor initState(ParamGroup group, Tensor param, Map<String, Tensor> state) {
        stepState(state);
        return state.computeIfAbsent(SUM, k -> Tensor.full(group.getDouble(INITIAL_ACCUMULATOR_VALUE),
                param.dtype(), param.shape()));
    }

    /** Builds an {@link Adagrad}; see the class comment for the options and their defaults. */
    public static final class Builder extends Optimizer.Builder<Builder, Adagrad> {
        private Builder() {
            super(pytorchDefaults());
        }

        /** The learning-rate decay per step (at least 0). */
        public Builder lrDecay(double lrDecay) {
            return set(LR_DECAY, lrDecay);
        }

        /** The starting value of every element of the squared-gradient sum (at least 0). */
        public Builder initialAccumulatorValue(double value) {
            return set(INITIAL_ACCUMULATOR_VALUE, value);
        }

        /** The term added to the denominator for numerical stability (at least 0). */
        public Builder eps(double eps) {
            return set(EPS, eps);
        }

        @Override
        protected Adagrad create(List<ParamGroup> groups, Map<String, Object> defaults) {
            return new Adagrad(groups, defaults);
        }
    }
}
