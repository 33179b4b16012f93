package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.ConvGeometry;
import io.tensorbus.internal.tensor.Pool2d.Windows;
import io.tensorbus.internal.tensor.Pool2d;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;

/** Max, average and adaptive average pooling over the last two dimensions, with their backward. */
final class PoolOps {
    private PoolOps() {
    }

    private static void checkInput(String op, Tensor x) {
        if (x.dim() != 3 && x.dim() != 4) {
            throw new IllegalArgumentException(op + ": expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got shape "
                    + Shapes.str(x.shape()));
        }
        if (x.dtype() != DType.FLOAT32 && x.dtype() != DType.FLOAT64) {
            throw new IllegalArgumentException(op + ": expected float32 or float64 input, got " + x.dtype());
        }
    }

    private static int[] outShape(Tensor x, Windows w) {
        int[] s = x.shape();
        s[s.length - 2] = w.outH();
        s[s.length - 1] = w.outW();
        return s;
    }

    private static int planes(Tensor x) {
        return x.numel() / Math.max(1, x.size(-1) * x.size(-2));
    }

    private static ConvGeometry geometry(String op, Tensor x, int[] kernel, int[] stride, int[] padding, boolean ceil) {
        int[] s = stride == null || stride.length == 0 ? kernel : stride;
        if (padding != null && kernel != null && padding.length == 2 && kernel.length == 2
                && (padding[0] * 2 > kernel[0] || padding[1] * 2 > kernel[1])) {
            throw new IllegalArgumentException(op + ": pad should be at most half of kernel size, but got padding="
                    + Arrays.toString(padding) + " and kernel size=" + Arrays.toString(kernel));
        }
        return ConvGeometry.of(op, x.size(-2), x.size(-1), kernel, s, padding, new int[] {1, 1}, ceil);
    }

    static Tensor maxPool2d(Tensor input, int[] kernel, int[] stride, int[] padding, boolean ceilMode) {
        checkInput("maxPool2d", input);
        Windows w = Windows.strided(geometry("maxPool2d", input, kernel, stride, padding, ceilMode), false);
        Tensor x = input.contiguous();
        if (TensorInternals.onDevice(x)) {
            return DevicePool.max(x, w, planes(x), outShape(x, w));
        }
        boolean isFloat = x.dtype() == DType.FLOAT32;
        Tensor out = Tensor.empty(x.dtype(), outShape(x, w));
        Tensor idx = Tensor.empty(DType.INT64, outShape(x, w));
        Pool2d.maxForward(x.dataSegment(), planes(x), w, out.dataSegment(), idx.dataSegment(), isFloat);
        int[] inShape = x.shape();
        return Autograd.record("MaxPool2DWithIndicesBackward0", out, g -> {
            Tensor gx = Tensor.zeros(x.dtype(), inShape);
            Pool2d.maxBackward(g[0].contiguous().dataSegment(), idx.dataSegment(), planes(x), w, gx.dataSegment(),
                    isFloat);
            return new Tensor[] {gx};
        }, input);
    }

    static Tensor avgPool2d(Tensor input, int[] kernel, int[] stride, int[] padding, boolean ceilMode,
            boolean countIncludePad) {
        checkInput("avgPool2d", input);
        Windows w = Windows.strided(geometry("avgPool2d", input, kernel, stride, padding, ceilMode), countIncludePad);
        return avg("AvgPool2DBackward0", input, w);
    }

    static Tensor adaptiveAvgPool2d(Tensor input, int outH, int outW) {
        checkInput("adaptiveAvgPool2d", input);
        if (outH <= 0 || outW <= 0) {
            throw new IllegalArgumentException("adaptiveAvgPool2d: output size must be positive, got " + outH + "x"
                    + outW);
        }
        return avg("AdaptiveAvgPool2DBackward0", input, Windows.adaptive(input.size(-2), input.size(-1), outH, outW));
    }

    private static Tensor avg(String name, Tensor input, Windows w) {
        Tensor x = input.contiguous();
        if (TensorInternals.onDevice(x)) {
            return DevicePool.avg(name, x, w, planes(x), outShape(x, w));
        }
        boolean isFloat = x.dtype() == DType.FLOAT32;
        Tensor out = Tensor.empty(x.dtype(), outShape(x, w));
        Pool2d.avgForward(x.dataSegment(), planes(x), w, out.dataSegment(), isFloat);
        int[] inShape = x.shape();
        return Autograd.record(name, out, g -> {
            Tensor gx = Tensor.zeros(x.dtype(), inShape);
            Pool2d.avgBackward(g[0].contiguous().dataSegment(), planes(x), w, gx.dataSegment(), isFloat);
            return new Tensor[] {gx};
        }, input);
    }
}
