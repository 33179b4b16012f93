package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Objects;

/**
 * The neural-network functions of PyTorch's {@code torch.nn.functional}: layers without state (convolution,
 * pooling, normalisation, dropout, activations) and losses. All are differentiable and check their inputs.
 */
public final class Functional {
    private Functional() {
    }

    /**
     * {@code x @ weight^T + bias}, with {@code weight} of shape {@code [out, in]}.
     *
     * @throws IllegalArgumentException when the last dimension of {@code x} is not {@code in}
     */
    public static Tensor linear(Tensor x, Tensor weight, Tensor bias) {
        Objects.requireNonNull(x, "x");
        if (weight.dim() != 2) {
            throw new IllegalArgumentException("linear: weight must be 2-d [out, in], got "
                    + Shapes.str(weight.shape()));
        }
        if (x.dim() == 0 || x.size(-1) != weight.size(1)) {
            throw new IllegalArgumentException("linear: input of shape " + Shapes.str(x.shape()) + " has "
                    + (x.dim() == 0 ? 0 : x.size(-1)) + " features but weight " + Shapes.str(weight.shape())
                    + " expects " + weight.size(1));
        }
        Tensor y = x.matmul(weight.t());
        return bias == null ? y : y.add(bias);
    }

    /**
     * 2-d convolution of {@code [N, C, H, W]} by {@code [out, C/groups, kH, kW]}.
     *
     * @param bias a vector of {@code out} values, or null
     * @param stride, padding, dilation two values each (height, width)
     * @throws IllegalArgumentException naming the shapes when they do not fit together
     */
    public static Tensor conv2d(Tensor x, Tensor weight, Tensor bias, int[] stride, int[] padding, int[] dilation,
            int groups) {
        return ConvOps.conv2d(x, weight, bias, stride, padding, dilation, groups);
    }

    /** 2-d convolution with square stride and padding, no dilation, one group. */
    public static Tensor conv2d(Tensor x, Tensor weight, Tensor bias, int stride, int padding) {
        return conv2d(x, weight, bias, new int[] {stride, stride}, new int[] {padding, padding}, new int[] {1, 1}, 1);
    }

    /**
     * Max pooling over {@code [.., H, W]}; {@code stride} null means the kernel size.
     *
     * @throws IllegalArgumentException for padding over half the kernel or an input too small for the window
     */
    public static Tensor maxPool2d(Tensor x, int[] kernel, int[] stride, int[] padding, boolean ceilMode) {
        return PoolOps.maxPool2d(x, kernel, stride, padding, ceilMode);
    }

    /** Max pooling with a square kernel, stride = kernel, no padding. */
    public static Tensor maxPool2d(Tensor x, int kernel) {
        return maxPool2d(x, new int[] {kernel, kernel}, null, new int[] {0, 0}, false);
    }

    /** Average pooling; {@code countIncludePad} divides by the full window, padding included (PyTorch's default). */
    public static Tensor avgPool2d(Tensor x, int[] kernel, int[] stride, int[] padding, boolean ceilMode,
            boolean countIncludePad) {
        return PoolOps.avgPool2d(x, kernel, stride, padding, ceilMode, countIncludePad);
    }

    /** Average pooling with a square kernel, stride = kernel, no padding. */
    public static Tensor avgPool2d(Tensor x, int kernel) {
        return avgPool2d(x, new int[] {kernel, kernel}, null, new int[] {0, 0}, false, true);
    }

    /** Average pooling to a fixed output size, whatever the input size. */
    public static Tensor adaptiveAvgPool2d(Tensor x, int outH, int outW) {
        return PoolOps.adaptiveAvgPool2d(x, outH, outW);
    }

    /**
     * Batch normalisation over dimension 1 ({@code [N, C]} or {@code [N, C, ...]}). In training it normalises
     * by the batch statistics and updates the running ones in place ({@code momentum} weights the new value;
     * the running variance is unbiased); in inference it uses the running statistics.
     *
     * @param runningMean, runningVar vectors of C values, or null (training only) to keep none
     * @param weight, bias vectors of C values, or null
     * @throws IllegalArgumentException for mismatched sizes, a batch of one value per channel in training,
     *     or missing running statistics in inference
     */
    public static Tensor batchNorm(Tensor x, Tensor runningMean, Tensor runningVar, Tensor weight, Tensor bias,
            boolean training, double momentum, double eps) {
        return BatchNormOp.batchNorm(x, runningMean, runningVar, weight, bias, training, momentum, eps);
    }

    /**
     * Zeroes each element with probability {@code p} and scales the rest by {@code 1/(1-p)} in training;
     * the identity otherwise.
     *
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 1]}
     */
    public static Tensor dropout(Tensor x, double p, boolean training, Generator generator) {
        return dropoutWithMask(x, p, training, generator, x.shape());
    }

    /**
     * Zeroes whole channels ({@code [N, C, H, W]} or {@code [C, H, W]}) with probability {@code p} and scales
     * the rest by {@code 1/(1-p)} in training, as {@code F.dropout2d}; the identity otherwise.
     *
     * @throws IllegalArgumentException for another rank or {@code p} outside {@code [0, 1]}
     */
    public static Tensor dropout2d(Tensor x, double p, boolean training, Generator generator) {
        if (x.dim() != 3 && x.dim() != 4) {
            throw new IllegalArgumentException("dropout2d: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got "
                    + Shapes.str(x.shape()));
        }
        int[] mask = x.shape();
        mask[mask.length - 1] = 1;
        mask[mask.length - 2] = 1;
        return dropoutWithMask(x, p, training, generator, mask);
    }

    /** Dropout with one keep-or-drop draw per element of {@code maskShape}, broadcast over {@code x}. */
    private static Tensor dropoutWithMask(Tensor x, double p, boolean training, Generator generator,
            int[] maskShape) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException("dropout probability has to be between 0 and 1, but got " + p);
        }
        if (!training || p == 0) {
            return x;
        }
        Tensor keep;
        try (var ignored = Autograd.noGrad()) {
            DType dt = x.dtype().isFloatingPoint() ? x.dtype() : DType.FLOAT32;
            Generator g = generator == null ? Generator.defaultGenerator() : generator;
            keep = DropoutMask.draw(g, p, dt, maskShape, x.device());
        }
        return x.mul(keep);
    }

    /** {@code max(x, 0)}. */
    public static Tensor relu(Tensor x) {
        return x.relu();
    }

    /** Softmax along {@code dim}. */
    public static Tensor softmax(Tensor x, int dim) {
        return x.softmax(dim);
    }

    /** Log-softmax along {@code dim}. */
    public static Tensor logSoftmax(Tensor x, int dim) {
        return x.logSoftmax(dim);
    }

    /** One-hot encoding of int64 class indices; {@code numClasses} -1 infers it from the largest index. */
    public static Tensor oneHot(Tensor indices, int numClasses) {
        return Tensor.oneHot(indices, numClasses);
    }

    /**
     * Negative log-likelihood of log-probabilities {@code [N, C]} (or {@code [N, C, d...]}) at int64 class
     * targets {@code [N]} (or {@code [N, d...]}).
     *
     * @param weight a rescaling weight per class, or null
     * @param ignoreIndex a target value that contributes nothing (PyTorch's default is -100)
     * @throws IllegalArgumentException for mismatched shapes, a non-int64 target, or a class out of range
     */
    public static Tensor nllLoss(Tensor input, Tensor target, Tensor weight, int ignoreIndex, Reduction reduction) {
        return LossOps.nllLoss(input, target, weight, ignoreIndex, reduction);
    }

    /** {@link #nllLoss(Tensor, Tensor, Tensor, int, Reduction)} without weights, ignoring -100, mean reduction. */
    public static Tensor nllLoss(Tensor input, Tensor target) {
        return nllLoss(input, target, null, -100, Reduction.MEAN);
    }

    /** Cross entropy of unnormalised logits: {@code nllLoss(logSoftmax(logits, 1), ...)}. */
    public static Tensor crossEntropy(Tensor logits, Tensor target, Tensor weight, int ignoreIndex,
            Reduction reduction) {
        if (logits.dim() < 2) {
            throw new IllegalArgumentException("crossEntropy: expected logits [N, C, ...], got shape "
                    + Shapes.str(logits.shape()));
        }
        return nllLoss(logits.logSoftmax(1), target, weight, ignoreIndex, reduction);
    }

    /** Cross entropy with mean reduction. */
    public static Tensor crossEntropy(Tensor logits, Tensor target) {
        return crossEntropy(logits, target, null, -100, Reduction.MEAN);
    }

    /**
     * Mean squared error.
     *
     * @throws IllegalArgumentException when the shapes differ
     */
    public static Tensor mseLoss(Tensor input, Tensor target, Reduction reduction) {
        if (!Arrays.equals(input.shape(), target.shape())) {
            throw new IllegalArgumentException("mseLoss: input shape " + Shapes.str(input.shape())
                    + " and target shape " + Shapes.str(target.shape()) + " must be equal");
        }
        Tensor d = input.sub(target);
        Tensor sq = d.mul(d);
        return switch (Objects.requireNonNull(reduction, "reduction")) {
            case NONE -> sq;
            case SUM -> sq.sum();
            case MEAN -> sq.mean();
        };
    }
}
