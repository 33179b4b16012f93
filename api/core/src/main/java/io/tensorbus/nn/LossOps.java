package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/** The negative log-likelihood loss, which cross entropy builds on. */
final class LossOps {
    private LossOps() {
    }

    static Tensor nllLoss(Tensor input, Tensor target, Tensor weight, int ignoreIndex, Reduction reduction) {
        Objects.requireNonNull(reduction, "reduction");
        Tensor logp = input;
        Tensor tgt = target;
        if (input.dim() > 2 && !spatialTargetFits(input, target)) {
            throw new IllegalArgumentException("nllLoss: input of shape " + Shapes.str(input.shape())
                    + " needs a target of shape [N, d...] = " + Shapes.str(spatialTarget(input)) + ", got "
                    + Shapes.str(target.shape()));
        }
        if (input.dim() > 2) {
            // [N, C, d...] -> [N*d..., C] so that every position is one sample.
            int c = input.size(1);
            int[] perm = new int[input.dim()];
            for (int i = 0, k = 0; i < input.dim(); i++) {
                if (i != 1) {
                    perm[k++] = i;
                }
            }
            perm[input.dim() - 1] = 1;
            logp = input.permute(perm).reshape(-1, c);
            tgt = target.reshape(-1);
        }
        check(logp, tgt, input, target, weight);
        int classes = logp.size(1);
        long[] t = tgt.toLongArray();
        long[] safe = new long[t.length];
        double[] w = new double[t.length];
        double[] classWeight = weight == null ? null : weight.toDoubleArray();
        for (int i = 0; i < t.length; i++) {
            boolean ignored = t[i] == ignoreIndex;
            if (!ignored && (t[i] < 0 || t[i] >= classes)) {
                throw new IllegalArgumentException("nllLoss: target " + t[i] + " is out of bounds (classes: "
                        + classes + ", ignoreIndex: " + ignoreIndex + ")");
            }
            safe[i] = ignored ? 0 : t[i];
            w[i] = ignored ? 0 : classWeight == null ? 1 : classWeight[(int) t[i]];
        }
        Tensor weights = Tensor.of(w).to(logp.dtype());
        Tensor picked = logp.gather(1, Tensor.of(safe).unsqueeze(1)).squeeze(1);
        Tensor losses = picked.mul(weights).neg();
        return switch (reduction) {
            case NONE -> input.dim() > 2 ? losses.reshape(target.shape()) : losses;
            case SUM -> losses.sum();
            case MEAN -> meanOver(losses.sum(), weights.sum().item());
        };
    }

    /** The weighted mean; with all targets ignored, NaN (as PyTorch) but zero gradients instead of NaN ones. */
    private static Tensor meanOver(Tensor sum, double totalWeight) {
        return totalWeight == 0 ? sum.mul(0.0).add(Double.NaN) : sum.div(totalWeight);
    }

    private static int[] spatialTarget(Tensor input) {
        int[] s = input.shape();
        int[] t = new int[s.length - 1];
        t[0] = s[0];
        System.arraycopy(s, 2, t, 1, s.length - 2);
        return t;
    }

    private static boolean spatialTargetFits(Tensor input, Tensor target) {
        return java.util.Arrays.equals(spatialTarget(input), target.shape());
    }

    private static void check(Tensor logp, Tensor tgt, Tensor input, Tensor target, Tensor weight) {
        if (input.dim() < 1 || input.dim() == 1) {
            throw new IllegalArgumentException("nllLoss: expected input [N, C] or [N, C, d...], got shape "
                    + Shapes.str(input.shape()));
        }
        if (target.dtype() != DType.INT64) {
            throw new IllegalArgumentException("nllLoss: expected an int64 target, got " + target.dtype());
        }
        if (tgt.dim() != 1 || tgt.size(0) != logp.size(0)) {
            throw new IllegalArgumentException("nllLoss: input shape " + Shapes.str(input.shape())
                    + " does not match target shape " + Shapes.str(target.shape()));
        }
        if (weight != null && (weight.dim() != 1 || weight.size(0) != logp.size(1))) {
            throw new IllegalArgumentException("nllLoss: weight must be a vector of " + logp.size(1)
                    + " class weights, got shape " + Shapes.str(weight.shape()));
        }
        if (Autograd.isGradEnabled() && target.requiresGrad()) {
            throw new IllegalArgumentException("nllLoss: the target must not require grad");
        }
    }
}
