package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.Philox;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;

/**
 * Dropout's masks, {@code 1/(1-p)} where an element is kept and 0 where it is dropped, drawn from the generator's
 * counter-based stream ({@link Philox}) where the input lives: the host fills them in a loop, a device in one
 * launch, and both keep the same elements for the same seed and offset.
 */
final class DropoutMask {
    private DropoutMask() {
    }

    /** A mask of {@code shape} in {@code dtype} on {@code device}, each element kept with probability {@code 1-p}. */
    static Tensor draw(Generator g, double p, DType dtype, int[] shape, Device device) {
        int n = Shapes.numel(shape);
        long seed;
        long offset;
        synchronized (g) {
            seed = g.initialSeed();
            offset = Philox.reserve(g, n);
        }
        double keep = 1 - p;
        double scale = 1 / keep;
        DType computed = dtype == DType.FLOAT64 ? DType.FLOAT64 : DType.FLOAT32;
        Tensor mask = device.isCpu() ? onHost(seed, offset, keep, scale, computed, shape)
                : onDevice(seed, offset, keep, scale, computed, shape, device);
        return mask.to(dtype);
    }

    private static Tensor onHost(long seed, long offset, double keep, double scale, DType dtype, int[] shape) {
        double[] u = new double[Shapes.numel(shape)];
        Philox.fill(seed, offset, u);
        if (dtype == DType.FLOAT64) {
            for (int i = 0; i < u.length; i++) {
                u[i] = u[i] < keep ? scale : 0;
            }
            return Tensor.of(u, shape);
        }
        float[] f = new float[u.length];
        float s = (float) scale;
        for (int i = 0; i < u.length; i++) {
            f[i] = u[i] < keep ? s : 0;
        }
        return Tensor.of(f, shape);
    }

    private static Tensor onDevice(long seed, long offset, double keep, double scale, DType dtype, int[] shape,
            Device device) {
        Tensor mask = Tensor.empty(device, dtype, shape);
        TensorInternals.launch("dropout", DeviceTensorKernels.program(dtype), DeviceTensorKernels.DROPOUT_MASK,
                mask.numel(), 0, mask, (long) mask.numel(), seed, offset, keep, scale);
        return mask;
    }
}
