package io.tensorbus.optim;

import static io.tensorbus.optim.ParamGroup.DAMPENING;
import static io.tensorbus.optim.ParamGroup.LR;
import static io.tensorbus.optim.ParamGroup.MAXIMIZE;
import static io.tensorbus.optim.ParamGroup.MOMENTUM;
import static io.tensorbus.optim.ParamGroup.NESTEROV;
import static io.tensorbus.optim.ParamGroup.WEIGHT_DECAY;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Stochastic gradient descent, optionally with momentum and Nesterov momentum ({@code torch.optim.SGD}),
 * with PyTorch 1.13's update: {@code g = grad + weight_decay * p}; with momentum,
 * {@code b = g} on a parameter's first step and {@code b = momentum * b + (1 - dampening) * g} after, then
 * {@code g = g + momentum * b} (Nesterov) or {@code g = b}; finally {@code p -= lr * g}.
 *
 * <p>Options: {@code lr} (required: no default), {@code momentum} 0, {@code dampening} 0,
 * {@code weight_decay} 0, {@code nesterov} false, {@code maximize} false. State per parameter:
 * {@code momentum_buffer} (only with momentum).
 */
public final class SGD extends Optimizer {
    /** The state key of the momentum buffer. */
    public static final String MOMENTUM_BUFFER = "momentum_buffer";
    private static final Set<String> KEYS = keys(LR, MOMENTUM, DAMPENING, WEIGHT_DECAY, NESTEROV, MAXIMIZE);

    private SGD(List<ParamGroup> groups, Map<String, Object> defaults) {
        super(groups, defaults);
    }

    /**
     * Plain SGD over {@code params} with learning rate {@code lr} and PyTorch's other defaults.
     *
     * @throws IllegalArgumentException when {@code params} is empty or {@code lr} is negative
     */
    public SGD(List<Tensor> params, double lr) {
        this(List.of(singleGroup(params)), withLr(lr));
    }

    /** A builder with PyTorch's defaults; {@code lr} must be set on it or on every group. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    protected Set<String> optionKeys() {
        return KEYS;
    }

    @Override
    protected void validate(Map<String, Object> o) {
        requireNonNegative(o, LR, "learning rate");
        requireNonNegative(o, MOMENTUM, "momentum value");
        requireNonNegative(o, WEIGHT_DECAY, "weight_decay value");
        if (Boolean.TRUE.equals(o.get(NESTEROV))
                && (!(o.get(MOMENTUM) instanceof Double m && m > 0) || !Double.valueOf(0.0).equals(o.get(DAMPENING)))) {
            throw new IllegalArgumentException("Nesterov momentum requires a momentum and zero dampening (momentum > 0,"
                    + " dampening == 0; got momentum=" + o.get(MOMENTUM) + ", dampening=" + o.get(DAMPENING) + ")");
        }
    }

    @Override
    protected void update(ParamGroup group, Tensor param, Tensor grad, Map<String, Tensor> state) {
        double momentum = group.getDouble(MOMENTUM);
        Tensor kept = state.get(MOMENTUM_BUFFER);
        if (FusedSteps.applies(param, grad, kept)) {
            Tensor buf = momentum == 0 ? null : kept != null ? kept : Tensor.zerosLike(param.detach());
            if (buf != null) {
                state.put(MOMENTUM_BUFFER, buf);
            }
            FusedSteps.sgd(param, grad, buf, group.lr(), momentum, group.getDouble(DAMPENING),
                    group.getDouble(WEIGHT_DECAY), group.getBoolean(NESTEROV), kept == null);
            return;
        }
        Tensor d = withWeightDecay(grad, param, group.getDouble(WEIGHT_DECAY));
        if (momentum != 0) {
            Tensor buf = state.get(MOMENTUM_BUFFER);
            if (buf == null) {
                buf = d.detach().clone();
                state.put(MOMENTUM_BUFFER, buf);
            } else {
                buf.muli(momentum).addi(d, 1 - group.getDouble(DAMPENING));
            }
            d = group.getBoolean(NESTEROV) ? d.add(buf, momentum) : buf;
        }
        param.addi(d, -group.lr());
    }

    private static Map<String, Object> pytorchDefaults() {
        return options(MOMENTUM, 0.0, DAMPENING, 0.0, WEIGHT_DECAY, 0.0, NESTEROV, false, MAXIMIZE, false);
    }

    private static Map<String, Object> withLr(double lr) {
        Map<String, Object> d = options(LR, lr);
        d.putAll(pytorchDefaults());
        return d;
    }

    /** Builds an {@link SGD}; see the class comment for the options and their defaults. */
    public static final class Builder extends Optimizer.Builder<Builder, SGD> {
        private Builder() {
            super(pytorchDefaults());
        }

        /** The momentum factor (at least 0; 0, the default, turns momentum off). */
        public Builder momentum(double momentum) {
            return set(MOMENTUM, momentum);
        }

        /** The dampening of the momentum (default 0; must be 0 with Nesterov). */
        public Builder dampening(double dampening) {
            return set(DAMPENING, dampening);
        }

        /** Nesterov momentum (default false; needs momentum > 0 and dampening 0). */
        public Builder nesterov(boolean nesterov) {
            return set(NESTEROV, nesterov);
        }

        @Override
        protected SGD create(List<ParamGroup> groups, Map<String, Object> defaults) {
            return new SGD(groups, defaults);
        }
    }
}
