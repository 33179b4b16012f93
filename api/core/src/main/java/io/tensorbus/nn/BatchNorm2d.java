package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Tensor;

/**
 * Batch normalisation over the channels of {@code [N, C, H, W]}, as {@code torch.nn.BatchNorm2d}: learnable
 * scale and shift (ones and zeros), and running statistics with PyTorch's buffer names
 * ({@code running_mean}, {@code running_var}, {@code num_batches_tracked}).
 */
public final class BatchNorm2d extends Module {
    private final int numFeatures;
    private final double eps;
    private final double momentum;
    private final Tensor weight;
    private final Tensor bias;
    private final Tensor runningMean;
    private final Tensor runningVar;
    private final Tensor numBatchesTracked;

    /** PyTorch's defaults: eps 1e-5, momentum 0.1, affine, tracking running statistics. */
    public BatchNorm2d(int numFeatures) {
        this(numFeatures, 1e-5, 0.1);
    }

    /**
     * @throws IllegalArgumentException for fewer than 1 feature, eps <= 0 or momentum outside [0, 1]
     */
    public BatchNorm2d(int numFeatures, double eps, double momentum) {
        if (numFeatures < 1 || !(eps > 0) || !(momentum >= 0 && momentum <= 1)) {
            throw new IllegalArgumentException("BatchNorm2d needs num_features >= 1, eps > 0 and momentum in [0, 1],"
                    + " got " + numFeatures + ", " + eps + ", " + momentum);
        }
        this.numFeatures = numFeatures;
        this.eps = eps;
        this.momentum = momentum;
        this.weight = registerParameter("weight", Tensor.ones(numFeatures));
        this.bias = registerParameter("bias", Tensor.zeros(numFeatures));
        this.runningMean = registerBuffer("running_mean", Tensor.zeros(numFeatures));
        this.runningVar = registerBuffer("running_var", Tensor.ones(numFeatures));
        this.numBatchesTracked = registerBuffer("num_batches_tracked", Tensor.zeros(DType.INT64));
    }

    /** The scale (gamma). */
    public Tensor weight() {
        return weight;
    }

    /** The shift (beta). */
    public Tensor bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor x) {
        if (x.dim() != 4 || x.size(1) != numFeatures) {
            throw new IllegalArgumentException(this + ": expected input [N, " + numFeatures + ", H, W], got "
                    + Shapes.str(x.shape()));
        }
        if (isTraining()) {
            try (var ignored = Autograd.noGrad()) {
                numBatchesTracked.addi(1.0);
            }
        }
        return Functional.batchNorm(x, runningMean, runningVar, weight, bias, isTraining(), momentum, eps);
    }

    @Override
    protected String extraRepr() {
        return numFeatures + ", eps=" + eps + ", momentum=" + momentum + ", affine=True, track_running_stats=True";
    }
}
