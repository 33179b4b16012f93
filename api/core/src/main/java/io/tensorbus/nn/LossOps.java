package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
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
        long[] picks = new long[t.length];
        double[] w = new double[t.length];
        double[] classWeight = weight == null ? null : weight.toDoubleArray();
        for (int i = 0; i < t.length; i++) {
            boolean ignored = t[i] == ignoreIndex;
            if (!ignored && (t[i] < 0 || t[i] >= classes)) {
                throw new IllegalArgumentException("nllLoss: target " + t[i] + " is out of bounds (classes: "
                        + classes + ", ignoreIndex: " + ignoreIndex + ")");
            }
            picks[i] = ignored ? -1 : t[i];
            w[i] = ignored ? 0 : classWeight == null ? 1 : classWeight[(int) t[i]];
        }
        Tensor losses = picked(logp, picks, w, reduction);
        return reduction == Reduction.NONE && input.dim() > 2 ? losses.reshape(target.shape()) : losses;
    }

    /**
     * PyTorch's {@code nll_loss} kernel on {@code [N, C]} log-probabilities: {@code -w[i] * logp[i, target[i]]},
     * reduced, with a backward that writes {@code -w[i]} times the incoming gradient at each target and zero
     * elsewhere. One node instead of a gather, a product, a negation and a sum; sums accumulate in double. A mean
     * over zero total weight is NaN, with zero gradients.
     *
     * @param target each sample's class, or -1 where the sample is ignored
     * @param w each sample's weight
     */
    private static Tensor picked(Tensor logp, long[] target, double[] w, Reduction reduction) {
        if (TensorInternals.onDevice(logp)) {
            return pickedOnDevice(logp, target, w, reduction);
        }
        DType dt = logp.dtype();
        int n = logp.size(0);
        int classes = logp.size(1);
        MemorySegment xs = logp.contiguous().dataSegment();
        double[] losses = new double[n];
        double total = 0;
        double totalWeight = 0;
        for (int i = 0; i < n; i++) {
            if (target[i] < 0) {
                continue; // ignored: no loss, no weight, no gradient
            }
            losses[i] = -w[i] * Access.getDouble(xs, dt, (long) i * classes + target[i]);
            total += losses[i];
            totalWeight += w[i];
        }
        double weightSum = totalWeight;
        Tensor out = switch (reduction) {
            case NONE -> Tensor.of(losses).to(dt);
            case SUM -> Tensor.scalar(total, dt);
            case MEAN -> Tensor.scalar(weightSum == 0 ? Double.NaN : total / weightSum, dt);
        };
        return Autograd.record("NllLossBackward0", out, g -> {
            double[] scale = g[0].to(DType.FLOAT64).contiguous().toDoubleArray();
            Tensor grad = Tensor.zeros(dt, n, classes);
            MemorySegment gs = grad.dataSegment();
            for (int i = 0; i < n; i++) {
                double gi = reduction == Reduction.NONE ? scale[i]
                        : reduction == Reduction.SUM ? scale[0] : weightSum == 0 ? 0 : scale[0] / weightSum;
                if (target[i] >= 0) {
                    Access.setDouble(gs, dt, (long) i * classes + target[i], -w[i] * gi);
                }
            }
            return new Tensor[] {grad};
        }, logp);
    }

    /**
     * {@link #picked} of device log-probabilities as recorded tensor operations: a host-built matrix holds each
     * sample's {@code -w[i]} (divided by the total weight for a mean) at its target, so the loss is the sum of its
     * product with {@code logp} and the gradient that matrix times the incoming one.
     */
    private static Tensor pickedOnDevice(Tensor logp, long[] target, double[] w, Reduction reduction) {
        int n = logp.size(0);
        int classes = logp.size(1);
        double totalWeight = 0;
        for (int i = 0; i < n; i++) {
            totalWeight += target[i] < 0 ? 0 : w[i];
        }
        double scale = reduction == Reduction.MEAN ? (totalWeight == 0 ? 0 : 1 / totalWeight) : 1;
        double[] picks = new double[n * classes];
        for (int i = 0; i < n; i++) {
            if (target[i] >= 0) {
                picks[i * classes + (int) target[i]] = -w[i] * scale;
            }
        }
        Tensor m = Tensor.of(picks, n, classes).to(logp.dtype()).to(logp.device());
        Tensor products = logp.mul(m);
        return switch (reduction) {
            case NONE -> products.sum(new int[] {1}, false);
            case SUM -> products.sum();
            case MEAN -> totalWeight == 0 ? products.sum().add(Double.NaN) : products.sum();
        };
    }

    private static int[] spatialTarget(Tensor input) {
        int[] s = input.shape();
        int[] t = new int[s.length - 1];
        t[0] = s[0];
        System.arraycopy(s, 2, t, 1, s.length - 2);
        return t;
    }

    private static boolean spatialTargetFits(Tensor input, Tensor target) {
        return Arrays.equals(spatialTarget(input), target.shape());
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
