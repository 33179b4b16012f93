package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.Pool2d.Windows;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;

/**
 * Max and average pooling of device tensors over the host's {@link Windows}, uploaded once per call: one work item
 * per output element forward, one per input pixel backward (summing the windows it belongs to), so no two work
 * items write one element.
 */
final class DevicePool {
    private DevicePool() {
    }

    /** Max pooling of a contiguous device tensor of {@code planes} planes. */
    static Tensor max(Tensor x, Windows w, int planes, int[] outShape) {
        Tensor windows = windows(x, w);
        Tensor out = Tensor.empty(x.device(), x.dtype(), outShape);
        Tensor idx = Tensor.empty(x.device(), DType.INT64, outShape);
        TensorInternals.launch("maxPool2d", DeviceTensorKernels.program(x.dtype()), DeviceTensorKernels.MAX_POOL,
                out.numel(), 0, x, out, idx, windows, (long) planes, (long) w.inH(), (long) w.inW(), (long) w.outH(),
                (long) w.outW());
        int[] inShape = x.shape();
        return Autograd.record("MaxPool2DWithIndicesBackward0", out, g -> {
            Tensor gx = Tensor.empty(x.device(), x.dtype(), inShape);
            TensorInternals.launch("maxPool2d backward", DeviceTensorKernels.program(x.dtype()),
                    DeviceTensorKernels.MAX_POOL_BACKWARD, gx.numel(), 0, g[0].to(x.dtype()).contiguous(), idx, gx,
                    windows, (long) planes, (long) w.inH(), (long) w.inW(), (long) w.outH(), (long) w.outW());
            return new Tensor[] {gx};
        }, x);
    }

    /** Average pooling (strided or adaptive windows) of a contiguous device tensor. */
    static Tensor avg(String name, Tensor x, Windows w, int planes, int[] outShape) {
        Tensor windows = windows(x, w);
        int countPad = w.countPadding() ? 1 : 0;
        Tensor out = Tensor.empty(x.device(), x.dtype(), outShape);
        TensorInternals.launch("avgPool2d", DeviceTensorKernels.program(x.dtype()), DeviceTensorKernels.AVG_POOL,
                out.numel(), 0, x, out, windows, (long) planes, (long) w.inH(), (long) w.inW(), (long) w.outH(),
                (long) w.outW(), countPad);
        int[] inShape = x.shape();
        return Autograd.record(name, out, g -> {
            Tensor gx = Tensor.empty(x.device(), x.dtype(), inShape);
            TensorInternals.launch("avgPool2d backward", DeviceTensorKernels.program(x.dtype()),
                    DeviceTensorKernels.AVG_POOL_BACKWARD, gx.numel(), 0, g[0].to(x.dtype()).contiguous(), gx,
                    windows, (long) planes, (long) w.inH(), (long) w.inW(), (long) w.outH(), (long) w.outW(),
                    countPad);
            return new Tensor[] {gx};
        }, x);
    }

    /** The windows' bounds as one int32 device tensor, in the order the kernels read them. */
    private static Tensor windows(Tensor on, Windows w) {
        int oh = w.outH();
        int ow = w.outW();
        int[] all = new int[3 * oh + 3 * ow];
        System.arraycopy(w.h0(), 0, all, 0, oh);
        System.arraycopy(w.h1(), 0, all, oh, oh);
        System.arraycopy(w.w0(), 0, all, 2 * oh, ow);
        System.arraycopy(w.w1(), 0, all, 2 * oh + ow, ow);
        System.arraycopy(w.padH(), 0, all, 2 * oh + 2 * ow, oh);
        System.arraycopy(w.padW(), 0, all, 3 * oh + 2 * ow, ow);
        return Tensor.of(all, all.length).to(on.device());
    }
}
