package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.BatchNormKernel;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;

/**
 * Batch normalisation over dimension 1 with its own kernels (statistics, normalisation and backward in a
 * few passes per channel, where composing it from elementwise ops took a dozen), and the running-statistics
 * update.
 */
final class BatchNormOp {
    private BatchNormOp() {
    }

    static Tensor batchNorm(Tensor x, Tensor runningMean, Tensor runningVar, Tensor weight, Tensor bias,
            boolean training, double momentum, double eps) {
        if (x.dim() < 2) {
            throw new IllegalArgumentException("batchNorm: expected input [N, C] or [N, C, ...], got shape "
                    + Shapes.str(x.shape()));
        }
        int c = x.size(1);
        checkVector("runningMean", runningMean, c);
        checkVector("runningVar", runningVar, c);
        checkVector("weight", weight, c);
        checkVector("bias", bias, c);
        if (!training && (runningMean == null || runningVar == null)) {
            throw new IllegalArgumentException("batchNorm: inference mode needs runningMean and runningVar");
        }
        if (x.dtype() != DType.FLOAT32 && x.dtype() != DType.FLOAT64) {
            throw new IllegalArgumentException("batchNorm: expected float32 or float64 input, got " + x.dtype());
        }
        if (TensorInternals.onDevice(x)) {
            return composite(x, runningMean, runningVar, weight, bias, training, momentum, eps);
        }
        Tensor xc = x.contiguous();
        BatchNormKernel.Layout l = new BatchNormKernel.Layout(x.size(0), c, x.numel() / Math.max(1, x.size(0) * c),
                x.dtype() == DType.FLOAT32);
        double[] mean = new double[c];
        double[] var = new double[c];
        if (training) {
            if (l.count() <= 1) {
                throw new IllegalArgumentException("batchNorm: expected more than 1 value per channel when training,"
                        + " got input of shape " + Shapes.str(x.shape()));
            }
            BatchNormKernel.statistics(xc.dataSegment(), l, mean, var);
            updateRunning(runningMean, runningVar, mean, var, momentum, l.count());
        } else {
            mean = runningMean.toDoubleArray();
            var = runningVar.toDoubleArray();
        }
        double[] invstd = new double[c];
        for (int i = 0; i < c; i++) {
            invstd[i] = 1 / Math.sqrt(var[i] + eps);
        }
        double[] scale = weight == null ? ones(c) : weight.toDoubleArray();
        double[] shift = bias == null ? new double[c] : bias.toDoubleArray();
        Tensor y = Tensor.empty(x.dtype(), x.shape());
        BatchNormKernel.normalize(xc.dataSegment(), l, mean, invstd, scale, shift, y.dataSegment());
        if (!Autograd.needsGrad(x, weight, bias)) {
            return y;
        }
        SavedTensor sx = SavedTensor.save(xc);
        double[] m = mean;
        return Autograd.record("NativeBatchNormBackward0", y, g -> backward(g[0], sx.unpack(), l, m, invstd, scale,
                training, x.requiresGrad(), weight, bias), x, weight, bias);
    }

    private static Tensor[] backward(Tensor gradOut, Tensor x, BatchNormKernel.Layout l, double[] mean,
            double[] invstd, double[] scale, boolean training, boolean needX, Tensor weight, Tensor bias) {
        Tensor g = gradOut.contiguous();
        Tensor gx = needX ? Tensor.empty(x.dtype(), x.shape()) : null;
        double[] dScale = new double[l.c()];
        double[] dShift = new double[l.c()];
        BatchNormKernel.backward(x.dataSegment(), g.dataSegment(), l, mean, invstd, scale, training, dScale, dShift,
                gx == null ? null : gx.dataSegment());
        Tensor gw = weight == null ? null : Tensor.of(dScale).to(weight.dtype());
        Tensor gb = bias == null ? null : Tensor.of(dShift).to(bias.dtype());
        return new Tensor[] {gx, gw, gb};
    }

    /**
     * Batch normalisation of a device tensor composed of recorded tensor operations (statistics over every
     * dimension but 1, in float64 sums), so autograd derives the backward; the running statistics move as the
     * host kernel moves them, with the unbiased variance.
     */
    private static Tensor composite(Tensor x, Tensor runningMean, Tensor runningVar, Tensor weight, Tensor bias,
            boolean training, double momentum, double eps) {
        int c = x.size(1);
        int[] dims = new int[x.dim() - 1];
        int[] channel = new int[x.dim()];
        Arrays.fill(channel, 1);
        channel[1] = c;
        for (int i = 0, k = 0; i < x.dim(); i++) {
            if (i != 1) {
                dims[k++] = i;
            }
        }
        long count = x.numel() / Math.max(1, c);
        Tensor y;
        if (training) {
            if (count <= 1) {
                throw new IllegalArgumentException("batchNorm: expected more than 1 value per channel when training,"
                        + " got input of shape " + Shapes.str(x.shape()));
            }
            Tensor centered = x.sub(x.mean(dims, true));
            Tensor var = centered.mul(centered).mean(dims, true);
            updateRunning(runningMean, runningVar, x.detach().mean(dims, false), var.detach().view(c), momentum,
                    count);
            y = centered.div(var.add(eps).sqrt());
        } else {
            y = x.sub(runningMean.view(channel)).div(runningVar.view(channel).add(eps).sqrt());
        }
        if (weight != null) {
            y = y.mul(weight.view(channel));
        }
        return bias == null ? y : y.add(bias.view(channel));
    }

    /** {@link #updateRunning(Tensor, Tensor, double[], double[], double, long)} from device statistics. */
    private static void updateRunning(Tensor rm, Tensor rv, Tensor mean, Tensor var, double momentum, long count) {
        try (var ignored = Autograd.noGrad()) {
            if (rm != null) {
                rm.muli(1 - momentum).addi(mean.to(rm.dtype()), momentum);
            }
            if (rv != null) {
                rv.muli(1 - momentum).addi(var.mul((double) count / (count - 1)).to(rv.dtype()), momentum);
            }
        }
    }

    private static double[] ones(int n) {
        double[] a = new double[n];
        Arrays.fill(a, 1.0);
        return a;
    }

    private static void updateRunning(Tensor rm, Tensor rv, double[] mean, double[] var, double momentum,
            long count) {
        try (var ignored = Autograd.noGrad()) {
            if (rm != null) {
                rm.muli(1 - momentum).addi(Tensor.of(mean).to(rm.dtype()), momentum);
            }
            if (rv != null) {
                double[] unbiased = new double[var.length];
                for (int i = 0; i < var.length; i++) {
                    unbiased[i] = var[i] * count / (count - 1);
                }
                rv.muli(1 - momentum).addi(Tensor.of(unbiased).to(rv.dtype()), momentum);
            }
        }
    }

    private static void checkVector(String name, Tensor t, int c) {
        if (t != null && (t.dim() != 1 || t.size(0) != c)) {
            throw new IllegalArgumentException("batchNorm: " + name + " must be a vector of " + c
                    + " elements (one per channel), got shape " + Shapes.str(t.shape()));
        }
    }

}
