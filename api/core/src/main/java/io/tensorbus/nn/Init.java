package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/**
 * Parameter initialisation as {@code torch.nn.init}: every function fills its tensor in place without
 * recording a graph, from the given generator (the default one when null).
 */
public final class Init {
    private Init() {
    }

    /** Whether the fan counts inputs (the forward pass's variance) or outputs (the backward pass's). */
    public enum FanMode {
        /** Inputs per output: {@code in_channels * kernel area}. */
        FAN_IN,
        /** Outputs per input: {@code out_channels * kernel area}. */
        FAN_OUT
    }

    /**
     * Fan-in and fan-out of a weight of at least 2 dimensions ({@code [out, in, k...]}).
     *
     * @throws IllegalArgumentException for fewer than 2 dimensions
     */
    public static int[] fans(Tensor t) {
        if (t.dim() < 2) {
            throw new IllegalArgumentException("fan in and fan out need a tensor of at least 2 dimensions, got "
                    + t.dim());
        }
        int receptive = t.numel() / (t.size(0) * t.size(1));
        return new int[] {t.size(1) * receptive, t.size(0) * receptive};
    }

    /** The gain of a nonlinearity for ReLU-family activations: {@code sqrt(2 / (1 + a^2))}. */
    public static double leakyReluGain(double a) {
        return Math.sqrt(2.0 / (1 + a * a));
    }

    /** Uniform in {@code [low, high)}. */
    public static Tensor uniform(Tensor t, double low, double high, Generator generator) {
        Tensor r = Tensor.rand(gen(generator), DType.FLOAT64, t.shape()).mul(high - low).add(low);
        return fill(t, r);
    }

    /** Normal with the given mean and standard deviation. */
    public static Tensor normal(Tensor t, double mean, double std, Generator generator) {
        return fill(t, Tensor.randn(gen(generator), DType.FLOAT64, t.shape()).mul(std).add(mean));
    }

    /** Every element {@code value}. */
    public static Tensor constant(Tensor t, double value) {
        try (var ignored = Autograd.noGrad()) {
            return t.filli(value);
        }
    }

    /**
     * He initialisation, uniform: bound {@code gain * sqrt(3 / fan)} with the leaky-ReLU gain for slope
     * {@code a} (PyTorch's Linear and Conv default uses {@code a = sqrt(5)} with fan-in).
     */
    public static Tensor kaimingUniform(Tensor t, double a, FanMode mode, Generator generator) {
        double bound = leakyReluGain(a) * Math.sqrt(3.0 / fan(t, mode));
        return uniform(t, -bound, bound, generator);
    }

    /** He initialisation, normal: std {@code gain / sqrt(fan)} (torchvision's ResNet uses fan-out, ReLU). */
    public static Tensor kaimingNormal(Tensor t, double a, FanMode mode, Generator generator) {
        return normal(t, 0, leakyReluGain(a) / Math.sqrt(fan(t, mode)), generator);
    }

    private static int fan(Tensor t, FanMode mode) {
        int[] f = fans(t);
        return mode == FanMode.FAN_IN ? f[0] : f[1];
    }

    private static Generator gen(Generator g) {
        return g == null ? Generator.defaultGenerator() : g;
    }

    private static Tensor fill(Tensor t, Tensor values) {
        try (var ignored = Autograd.noGrad()) {
            return t.copyi(values);
        }
    }
}
