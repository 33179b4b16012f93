package io.tensorbus.nn;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.impl.Shapes;

/** Batch normalisation over dimension 1, composed of differentiable ops, with the running-statistics update. */
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
        int[] dims = reduceDims(x.dim());
        int[] bshape = broadcastShape(x.dim(), c);
        Tensor mean;
        Tensor var;
        if (training) {
            long count = (long) x.numel() / Math.max(c, 1);
            if (count <= 1) {
                throw new IllegalArgumentException("batchNorm: expected more than 1 value per channel when training,"
                        + " got input of shape " + Shapes.str(x.shape()));
            }
            mean = x.mean(dims, true);
            Tensor centered = x.sub(mean);
            var = centered.mul(centered).mean(dims, true);
            updateRunning(runningMean, runningVar, mean, var, momentum, count);
        } else {
            if (runningMean == null || runningVar == null) {
                throw new IllegalArgumentException("batchNorm: inference mode needs runningMean and runningVar");
            }
            mean = runningMean.view(bshape);
            var = runningVar.view(bshape);
        }
        Tensor y = x.sub(mean).div(var.add(eps).sqrt());
        if (weight != null) {
            y = y.mul(weight.view(bshape));
        }
        return bias == null ? y : y.add(bias.view(bshape));
    }

    private static void updateRunning(Tensor rm, Tensor rv, Tensor mean, Tensor var, double momentum, long count) {
        try (var ignored = Autograd.noGrad()) {
            if (rm != null) {
                rm.muli(1 - momentum).addi(mean.reshape(-1).to(rm.dtype()), momentum);
            }
            if (rv != null) {
                Tensor unbiased = var.reshape(-1).mul((double) count / (count - 1)).to(rv.dtype());
                rv.muli(1 - momentum).addi(unbiased, momentum);
            }
        }
    }

    private static void checkVector(String name, Tensor t, int c) {
        if (t != null && (t.dim() != 1 || t.size(0) != c)) {
            throw new IllegalArgumentException("batchNorm: " + name + " must be a vector of " + c
                    + " elements (one per channel), got shape " + Shapes.str(t.shape()));
        }
    }

    private static int[] reduceDims(int rank) {
        int[] dims = new int[rank - 1];
        dims[0] = 0;
        for (int i = 2; i < rank; i++) {
            dims[i - 1] = i;
        }
        return dims;
    }

    private static int[] broadcastShape(int rank, int c) {
        int[] s = new int[rank];
        java.util.Arrays.fill(s, 1);
        s[1] = c;
        return s;
    }
}
