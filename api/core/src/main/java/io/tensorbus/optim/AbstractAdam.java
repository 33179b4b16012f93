package io.tensorbus.optim;

import static io.tensorbus.optim.ParamGroup.AMSGRAD;
import static io.tensorbus.optim.ParamGroup.BETAS;
import static io.tensorbus.optim.ParamGroup.EPS;
import static io.tensorbus.optim.ParamGroup.LR;
import static io.tensorbus.optim.ParamGroup.MAXIMIZE;
import static io.tensorbus.optim.ParamGroup.WEIGHT_DECAY;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@link Adam} and {@link AdamW} share: options, their checks, and PyTorch 1.13's single-tensor update.
 * They differ only in how weight decay applies (added to the gradient, or decoupled: {@code p *= 1 - lr * wd}).
 */
abstract class AbstractAdam extends Optimizer {
    /** State key: running average of the gradient. */
    static final String EXP_AVG = "exp_avg";
    /** State key: running average of the squared gradient. */
    static final String EXP_AVG_SQ = "exp_avg_sq";
    /** State key: running maximum of {@code exp_avg_sq} (AMSGrad only). */
    static final String MAX_EXP_AVG_SQ = "max_exp_avg_sq";
    private static final Set<String> KEYS = keys(LR, BETAS, EPS, WEIGHT_DECAY, AMSGRAD, MAXIMIZE);

    AbstractAdam(List<ParamGroup> groups, Map<String, Object> defaults) {
        super(groups, defaults);
    }

    /** True for AdamW's decoupled weight decay, false for Adam's L2 penalty. */
    abstract boolean decoupledWeightDecay();

    /** PyTorch's defaults, with {@code weightDecay} as the default weight decay. */
    static Map<String, Object> pytorchDefaults(double weightDecay) {
        return options(LR, 1e-3, BETAS, List.of(0.9, 0.999), EPS, 1e-8, WEIGHT_DECAY, weightDecay, AMSGRAD, false,
                MAXIMIZE, false);
    }

    @Override
    protected final Set<String> optionKeys() {
        return KEYS;
    }

    @Override
    protected final void validate(Map<String, Object> o) {
        requireNonNegative(o, LR, "learning rate");
        requireNonNegative(o, EPS, "epsilon value");
        if (o.get(BETAS) instanceof List<?> betas) {
            for (int i = 0; i < 2; i++) {
                double b = (Double) betas.get(i);
                if (!(b >= 0.0 && b < 1.0)) {
                    throw new IllegalArgumentException("Invalid beta parameter at index " + i + ": " + b
                            + " (betas must be in [0, 1))");
                }
            }
        }
        requireNonNegative(o, WEIGHT_DECAY, "weight_decay value");
    }

    @Override
    protected final void update(ParamGroup group, Tensor param, Tensor grad, Map<String, Tensor> state) {
        double step = incrementStep(state);
        double lr = group.lr();
        double weightDecay = group.getDouble(WEIGHT_DECAY);
        double[] betas = group.getDoubles(BETAS);
        if (!group.getBoolean(AMSGRAD) && FusedSteps.applies(param, grad, state.get(EXP_AVG),
                state.get(EXP_AVG_SQ))) {
            FusedSteps.adam(param, grad, zerosState(state, EXP_AVG, param), zerosState(state, EXP_AVG_SQ, param), lr,
                    betas[0], betas[1], group.getDouble(EPS), weightDecay, decoupledWeightDecay(), step);
            return;
        }
        if (decoupledWeightDecay()) {
            param.muli(1 - lr * weightDecay);
        } else {
            grad = withWeightDecay(grad, param, weightDecay);
        }
        Tensor expAvg = zerosState(state, EXP_AVG, param);
        Tensor expAvgSq = zerosState(state, EXP_AVG_SQ, param);
        expAvg.muli(betas[0]).addi(grad, 1 - betas[0]);
        expAvgSq.muli(betas[1]).addi(grad.mul(grad), 1 - betas[1]);
        double stepSize = lr / (1 - Math.pow(betas[0], step));
        double biasCorrection2Sqrt = Math.sqrt(1 - Math.pow(betas[1], step));
        Tensor second = expAvgSq;
        if (group.getBoolean(AMSGRAD)) {
            second = zerosState(state, MAX_EXP_AVG_SQ, param);
            maximumInto(second, expAvgSq);
        }
        Tensor denom = second.sqrt().divi(biasCorrection2Sqrt).addi(group.getDouble(EPS));
        param.addi(expAvg.div(denom), -stepSize);
    }

    /**
     * {@code target = max(target, other)} elementwise, NaN-propagating as {@code torch.maximum}. The tensor
     * core has no elementwise maximum yet, so this goes through double arrays (exact for float32/float64).
     */
    static void maximumInto(Tensor target, Tensor other) {
        double[] a = target.toDoubleArray();
        double[] b = other.toDoubleArray();
        for (int i = 0; i < a.length; i++) {
            a[i] = Math.max(a[i], b[i]);
        }
        target.copyi(Tensor.of(a, target.shape()));
    }

    /** The options Adam and AdamW share on top of {@link Optimizer.Builder}'s. */
    abstract static class AdamBuilder<B extends AdamBuilder<B, O>, O extends Optimizer> extends Optimizer.Builder<B,
            O> {
        AdamBuilder(Map<String, Object> pytorchDefaults) {
            super(pytorchDefaults);
        }

        /** The running-average coefficients of the gradient and its square, each in [0, 1). */
        public B betas(double beta1, double beta2) {
            return set(BETAS, List.of(beta1, beta2));
        }

        /** The term added to the denominator for numerical stability (at least 0). */
        public B eps(double eps) {
            return set(EPS, eps);
        }

        /** The AMSGrad variant (default false). */
        public B amsgrad(boolean amsgrad) {
            return set(AMSGRAD, amsgrad);
        }
    }
}
