package io.tensorbus.internal.tensor;

import java.util.Arrays;

/**
 * The sizes of one 2-d convolution or pooling window: input plane, kernel, stride, padding, dilation and
 * the output plane they give ({@code floor((in + 2p - d(k-1) - 1) / s) + 1}, or ceil with {@code ceilMode}).
 */
public record ConvGeometry(int inH, int inW, int kH, int kW, int sH, int sW, int pH, int pW, int dH, int dW,
        int outH, int outW) {

    /**
     * Computes the output size and checks every argument.
     *
     * @throws IllegalArgumentException for non-positive kernel, stride or dilation, negative padding, padding
     *     over half the kernel (pooling), or an output that would be empty
     */
    public static ConvGeometry of(String op, int inH, int inW, int[] kernel, int[] stride, int[] padding,
            int[] dilation, boolean ceilMode) {
        check(op, "kernel size", kernel, 1);
        check(op, "stride", stride, 1);
        check(op, "padding", padding, 0);
        check(op, "dilation", dilation, 1);
        int oh = outSize(inH, kernel[0], stride[0], padding[0], dilation[0], ceilMode);
        int ow = outSize(inW, kernel[1], stride[1], padding[1], dilation[1], ceilMode);
        if (oh <= 0 || ow <= 0) {
            throw new IllegalArgumentException(op + ": input plane " + inH + "x" + inW + " is too small for kernel "
                    + kernel[0] + "x" + kernel[1] + " with padding " + padding[0] + "x" + padding[1] + " and dilation "
                    + dilation[0] + "x" + dilation[1] + " (output would be " + oh + "x" + ow + ")");
        }
        return new ConvGeometry(inH, inW, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1],
                dilation[0], dilation[1], oh, ow);
    }

    private static void check(String op, String what, int[] v, int min) {
        if (v == null || v.length != 2 || v[0] < min || v[1] < min) {
            throw new IllegalArgumentException(op + ": " + what + " must be two values >= " + min + ", got "
                    + (v == null ? "null" : Arrays.toString(v)));
        }
    }

    private static int outSize(int in, int k, int s, int p, int d, boolean ceil) {
        int span = in + 2 * p - d * (k - 1) - 1;
        if (span < 0) {
            return 0;
        }
        int out = (ceil ? (span + s - 1) / s : span / s) + 1;
        // With ceil mode the last window must start inside the input or left padding (PyTorch's rule).
        if (ceil && (long) (out - 1) * s >= in + p) {
            out--;
        }
        return out;
    }

    /**
     * Stride 1 with an output plane the size of the input ("same" padding, as ResNet's 3x3 convolutions):
     * then a column row of im2col is the input plane shifted, and the input gradient is itself such a
     * convolution (of the output gradient by the flipped weights).
     */
    public boolean isSamePlane() {
        return sH == 1 && sW == 1 && outH == inH && outW == inW;
    }

    /** The geometry of the input-gradient convolution of a same-plane convolution (see {@link #isSamePlane}). */
    public ConvGeometry transposedSamePlane() {
        return new ConvGeometry(outH, outW, kH, kW, 1, 1, dH * (kH - 1) - pH, dW * (kW - 1) - pW, dH, dW, inH, inW);
    }

    /** Output elements per plane. */
    public int outPlane() {
        return outH * outW;
    }

    /** Input elements per plane. */
    public int inPlane() {
        return inH * inW;
    }
}
