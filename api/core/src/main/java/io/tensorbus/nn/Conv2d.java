package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;

/** 2-d convolution, as {@code torch.nn.Conv2d}, with PyTorch's default initialisation. */
public final class Conv2d extends Module {
    private final int inChannels;
    private final int outChannels;
    private final int[] kernel;
    private final int[] stride;
    private final int[] padding;
    private final int[] dilation;
    private final int groups;
    private final Tensor weight;
    private final Tensor bias;

    /** A square kernel with stride, padding and a bias. */
    public Conv2d(int inChannels, int outChannels, int kernel, int stride, int padding) {
        this(inChannels, outChannels, new int[] {kernel, kernel}, new int[] {stride, stride},
                new int[] {padding, padding}, new int[] {1, 1}, 1, true, null);
    }

    /**
     * @param kernel, stride, padding, dilation two values each (height, width)
     * @param generator for the initial values (the default generator when null)
     * @throws IllegalArgumentException for channel counts not divisible by {@code groups} or bad sizes
     */
    public Conv2d(int inChannels, int outChannels, int[] kernel, int[] stride, int[] padding, int[] dilation,
            int groups, boolean bias, Generator generator) {
        if (inChannels < 1 || outChannels < 1 || groups < 1 || inChannels % groups != 0 || outChannels % groups != 0) {
            throw new IllegalArgumentException("Conv2d: in_channels (" + inChannels + ") and out_channels ("
                    + outChannels + ") must be >= 1 and divisible by groups (" + groups + ")");
        }
        checkPair("kernel_size", kernel, 1);
        checkPair("stride", stride, 1);
        checkPair("padding", padding, 0);
        checkPair("dilation", dilation, 1);
        this.inChannels = inChannels;
        this.outChannels = outChannels;
        this.kernel = kernel.clone();
        this.stride = stride.clone();
        this.padding = padding.clone();
        this.dilation = dilation.clone();
        this.groups = groups;
        this.weight = registerParameter("weight",
                Tensor.empty(DType.FLOAT32, outChannels, inChannels / groups, kernel[0], kernel[1]));
        Init.kaimingUniform(weight, Math.sqrt(5), Init.FanMode.FAN_IN, generator);
        if (bias) {
            double bound = 1 / Math.sqrt(Init.fans(weight)[0]);
            this.bias = registerParameter("bias", Init.uniform(Tensor.empty(DType.FLOAT32, outChannels), -bound, bound,
                    generator));
        } else {
            this.bias = null;
        }
    }

    private static void checkPair(String what, int[] v, int min) {
        if (v == null || v.length != 2 || v[0] < min || v[1] < min) {
            throw new IllegalArgumentException("Conv2d: " + what + " must be two values >= " + min + ", got "
                    + Arrays.toString(v));
        }
    }

    /** The {@code [out, in/groups, kH, kW]} weight. */
    public Tensor weight() {
        return weight;
    }

    /** The bias, or null. */
    public Tensor bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor x) {
        if (x.dim() != 4 || x.size(1) != inChannels) {
            throw new IllegalArgumentException(this + ": expected input [N, " + inChannels + ", H, W], got "
                    + Shapes.str(x.shape()));
        }
        return Functional.conv2d(x, weight, bias, stride, padding, dilation, groups);
    }

    @Override
    protected String extraRepr() {
        String s = inChannels + ", " + outChannels + ", kernel_size=(" + kernel[0] + ", " + kernel[1] + "), stride=("
                + stride[0] + ", " + stride[1] + ")";
        if (padding[0] != 0 || padding[1] != 0) {
            s += ", padding=(" + padding[0] + ", " + padding[1] + ")";
        }
        if (dilation[0] != 1 || dilation[1] != 1) {
            s += ", dilation=(" + dilation[0] + ", " + dilation[1] + ")";
        }
        if (groups != 1) {
            s += ", groups=" + groups;
        }
        return bias == null ? s + ", bias=False" : s;
    }
}
