package io.tensorbus.nn;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.ConvGeometry;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * 2-d convolution of device tensors as im2col + GEMM: the columns of the whole batch in one kernel, one batched
 * GEMM against the weight (read in place, broadcast over the batch), and for the backward the GEMMs of the weight
 * and input gradients and a col2im kernel in which each input pixel sums its windows, so no two work items write
 * one element. Grouped convolutions run one such convolution per group.
 */
final class DeviceConv {
    private DeviceConv() {
    }

    /** {@code conv2d} of checked operands of which one lives on a device. */
    static Tensor conv2d(Tensor input, Tensor weight, Tensor bias, ConvOps.Dims d) {
        if (d.groups() != 1) {
            return grouped(input, weight, bias, d);
        }
        Tensor out;
        Tensor cols;
        try (var ignored = Autograd.noGrad()) {
            cols = columns(input.contiguous(), d);
            out = weight.contiguous().view(d.o(), d.k()).matmul(cols).view(d.n(), d.o(), d.g().outH(), d.g().outW());
            if (bias != null) {
                out = out.add(bias.view(1, d.o(), 1, 1));
            }
        }
        if (!Autograd.needsGrad(input, weight, bias)) {
            return out;
        }
        SavedTensor sw = SavedTensor.save(weight);
        boolean needX = input.requiresGrad();
        boolean needW = weight.requiresGrad();
        boolean hasBias = bias != null;
        Tensor saved = needW ? cols : null;
        return Autograd.record("ConvolutionBackward0", out, g -> backward(g[0], sw.unpack(), saved, d, needX, needW,
                hasBias), input, weight, bias);
    }

    /**
     * A grouped (or depthwise) convolution as one convolution per group of channels, joined along the channels:
     * recorded narrows and a cat carry the gradients back, so the groups share the one-group kernels.
     */
    private static Tensor grouped(Tensor input, Tensor weight, Tensor bias, ConvOps.Dims d) {
        ConvGeometry g = d.g();
        int[] stride = {g.sH(), g.sW()};
        int[] padding = {g.pH(), g.pW()};
        int[] dilation = {g.dH(), g.dW()};
        List<Tensor> parts = new ArrayList<>(d.groups());
        for (int gi = 0; gi < d.groups(); gi++) {
            Tensor b = bias == null ? null : bias.narrow(0, gi * d.og(), d.og());
            parts.add(ConvOps.conv2d(input.narrow(1, gi * d.cg(), d.cg()), weight.narrow(0, gi * d.og(), d.og()), b,
                    stride, padding, dilation, 1));
        }
        return Tensor.cat(parts, 1);
    }

    private static Tensor[] backward(Tensor gradOut, Tensor weight, Tensor cols, ConvOps.Dims d, boolean needX,
            boolean needW, boolean hasBias) {
        Tensor gy = gradOut.contiguous().view(d.n(), d.o(), d.p());
        Tensor gx = needX ? image(weight.contiguous().view(d.o(), d.k()).t().matmul(gy), d) : null;
        Tensor gw = needW ? gy.bmm(cols.transpose(1, 2)).sum(new int[] {0}, false).view(weight.shape()) : null;
        Tensor gb = hasBias ? gy.sum(new int[] {0, 2}, false) : null;
        return new Tensor[] {gx, gw, gb};
    }

    /** The {@code [N, C*kH*kW, outH*outW]} columns of a contiguous input. */
    private static Tensor columns(Tensor x, ConvOps.Dims d) {
        Tensor cols = Tensor.empty(x.device(), x.dtype(), d.n(), d.k(), d.p());
        TensorInternals.launch("conv2d", DeviceTensorKernels.program(x.dtype()), DeviceTensorKernels.IM2COL,
                (long) d.n() * d.k() * d.p(), 0, geometry(x, cols, d));
        return cols;
    }

    /** The input gradient {@code [N, C, H, W]} from column gradients. */
    private static Tensor image(Tensor gcols, ConvOps.Dims d) {
        ConvGeometry g = d.g();
        Tensor gx = Tensor.empty(gcols.device(), gcols.dtype(), d.n(), d.c(), g.inH(), g.inW());
        TensorInternals.launch("conv2d backward", DeviceTensorKernels.program(gcols.dtype()),
                DeviceTensorKernels.COL2IM, gx.numel(), 0, geometry(gcols, gx, d));
        return gx;
    }

    private static Object[] geometry(Tensor from, Tensor to, ConvOps.Dims d) {
        ConvGeometry g = d.g();
        return new Object[] {from, to, (long) d.n(), (long) d.c(), (long) g.inH(), (long) g.inW(), (long) g.outH(),
            (long) g.outW(), (long) g.kH(), (long) g.kW(), (long) g.sH(), (long) g.sW(), (long) g.pH(), (long) g.pW(),
            (long) g.dH(), (long) g.dW()};
    }
}
