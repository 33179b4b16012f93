package io.tensorbus.nn;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.ConvGeometry;
import io.tensorbus.internal.tensor.Gemm;
import io.tensorbus.internal.tensor.Im2Col;
import io.tensorbus.internal.tensor.Scratch;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;

/** 2-d convolution as im2col + GEMM per image and group, with its backward (input, weight, bias). */
final class ConvOps {
    private ConvOps() {
    }

    /** The sizes of one conv2d call. */
    record Dims(int n, int c, int o, int groups, int cg, int og, int k, int p, ConvGeometry g, boolean isFloat) {
        long colBytes() {
            return (long) k * p * (isFloat ? 4 : 8);
        }

        boolean pointwise() {
            return g.kH() == 1 && g.kW() == 1 && g.sH() == 1 && g.sW() == 1 && g.pH() == 0 && g.pW() == 0;
        }
    }

    static Tensor conv2d(Tensor input, Tensor weight, Tensor bias, int[] stride, int[] padding, int[] dilation,
            int groups) {
        Dims d = check(input, weight, bias, stride, padding, dilation, groups);
        if (TensorInternals.onDevice(input) || TensorInternals.onDevice(weight)) {
            return DeviceConv.conv2d(input, weight, bias, d);
        }
        Tensor x = input.contiguous();
        Tensor w = weight.contiguous();
        // Every output element is written: by the GEMMs, or the batched lowering's copies.
        Tensor out = TensorInternals.uninitialized(x.dtype(), d.n, d.o, d.g.outH(), d.g.outW());
        boolean keepColumns = Autograd.needsGrad(weight);
        Tensor columns = null;
        boolean batched = BatchedConv.applies(d);
        if (batched) {
            columns = BatchedConv.forward(x, w, bias, d, out, keepColumns);
        } else {
            perImageForward(x, w, d, out);
        }
        if (bias != null && !batched) {
            try (var ignored = Autograd.noGrad()) {
                // [N, O, P] + b[O] as [N*O, P] + [N*O, 1]: each output row gets one value, added with vectors.
                Tensor b = bias.contiguous().view(1, d.o).expand(d.n, d.o).reshape(d.n * d.o, 1);
                out.view(d.n * d.o, d.p).addi(b);
            }
        }
        if (!Autograd.needsGrad(input, weight, bias)) {
            return out;
        }
        SavedTensor sx = SavedTensor.save(input);
        SavedTensor sw = SavedTensor.save(weight);
        boolean needX = input.requiresGrad();
        boolean needW = weight.requiresGrad();
        Tensor saved = columns;
        return Autograd.record("ConvolutionBackward0", out, gy -> backward(gy[0], sx.unpack(), sw.unpack(),
                bias != null, needX, needW, d, saved), input, weight, bias);
    }

    /** One GEMM per image and group: large planes, where the columns of a whole batch would not fit. */
    private static void perImageForward(Tensor x, Tensor w, Dims d, Tensor out) {
        MemorySegment col = d.pointwise() ? null : Scratch.get(0, d.colBytes());
        for (int n = 0; n < d.n; n++) {
            for (int gi = 0; gi < d.groups; gi++) {
                long xOff = x.storageOffset() + ((long) n * d.c + (long) gi * d.cg) * d.g.inPlane();
                MemorySegment colSeg = columns(x, xOff, d, col);
                long colOff = col == null ? xOff : 0;
                gemm(d.isFloat, false, false, d.og, d.p, d.k, memory(w),
                        w.storageOffset() + (long) gi * d.og * d.k, d.k, colSeg, colOff, d.p, 0,
                        memory(out), ((long) n * d.o + (long) gi * d.og) * d.p, d.p);
            }
        }
    }

    private static MemorySegment columns(Tensor x, long xOff, Dims d, MemorySegment col) {
        if (col == null) {
            return memory(x);
        }
        Im2Col.im2col(memory(x), xOff, d.cg, d.g, col, 0, d.isFloat);
        return col;
    }

    private static Tensor[] backward(Tensor gradOut, Tensor input, Tensor weight, boolean hasBias, boolean needX,
            boolean needW, Dims d, Tensor columns) {
        Tensor gy = contiguousInScratch(gradOut, 2);
        Tensor x = input.contiguous();
        Tensor w = weight.contiguous();
        boolean batched = BatchedConv.applies(d);
        boolean transposed = !batched && needX && !d.pointwise() && d.g.isSamePlane();
        // The same-plane and pointwise input gradients write every element of gx (GEMMs with beta 0 straight into
        // it); col2im adds into it.
        boolean overwritten = !batched && (transposed || d.pointwise());
        Tensor gx = null;
        if (needX) {
            gx = overwritten ? TensorInternals.uninitialized(x.dtype(), x.shape()) : Tensor.zeros(x.dtype(), x.shape());
        }
        Tensor gw = needW ? Tensor.zeros(w.dtype(), w.shape()) : null;
        if (batched) {
            BatchedConv.backward(gy, x, w, d, gx, gw, columns);
            return new Tensor[] {gx, gw, hasBias ? gy.sum(new int[] {0, 2, 3}, false) : null};
        }
        MemorySegment col = d.pointwise() ? null : Scratch.get(0, d.colBytes());
        Tensor wFlip = transposed ? flippedTransposed(w, d) : null;
        MemorySegment gcol = d.pointwise() || !needX ? null
                : Scratch.get(1, transposed ? (long) d.og * d.g.kH() * d.g.kW() * d.p * (d.isFloat ? 4 : 8)
                : d.colBytes());
        MemorySegment gys = memory(gy);
        for (int n = 0; n < d.n; n++) {
            for (int gi = 0; gi < d.groups; gi++) {
                long xOff = x.storageOffset() + ((long) n * d.c + (long) gi * d.cg) * d.g.inPlane();
                long yOff = gy.storageOffset() + ((long) n * d.o + (long) gi * d.og) * d.p;
                long wOff = w.storageOffset() + (long) gi * d.og * d.k;
                if (needW) {
                    MemorySegment colSeg = columns(x, xOff, d, col);
                    gemm(d.isFloat, false, true, d.og, d.k, d.p, gys, yOff, d.p, colSeg, col == null ? xOff : 0, d.p,
                            1, memory(gw), (long) gi * d.og * d.k, d.k);
                }
                if (transposed) {
                    inputGradSamePlane(gys, yOff, wFlip, gi, d, gcol, gx, ((long) n * d.c + (long) gi * d.cg) * d.p);
                } else if (needX) {
                    long gxOff = ((long) n * d.c + (long) gi * d.cg) * d.g.inPlane();
                    MemorySegment dst = gcol == null ? memory(gx) : gcol;
                    gemm(d.isFloat, true, false, d.k, d.p, d.og, memory(w), wOff, d.k, gys, yOff, d.p, 0,
                            dst, gcol == null ? gxOff : 0, d.p);
                    if (gcol != null) {
                        Im2Col.col2im(gcol, 0, d.cg, d.g, memory(gx), gxOff, d.isFloat);
                    }
                }
            }
        }
        Tensor gb = hasBias ? gy.sum(new int[] {0, 2, 3}, false) : null;
        return new Tensor[] {gx, gw, gb};
    }

    /**
     * The input gradient of a same-plane convolution (stride 1, output the size of the input) as a
     * convolution of the output gradient by the flipped, transposed weights: one GEMM with the deep inner
     * dimension {@code out/groups * kH * kW} writing straight into {@code gx}, where the general path does a
     * shallow GEMM into columns and then folds them back with col2im.
     */
    private static void inputGradSamePlane(MemorySegment gy, long yOff, Tensor wFlip, int group, Dims d,
            MemorySegment cols, Tensor gx, long gxOff) {
        ConvGeometry t = d.g.transposedSamePlane();
        int depth = d.og * t.kH() * t.kW();
        Im2Col.im2col(gy, yOff, d.og, t, cols, 0, d.isFloat);
        gemm(d.isFloat, false, false, d.cg, d.p, depth, memory(wFlip),
                wFlip.storageOffset() + (long) group * d.cg * depth, depth, cols, 0, d.p, 0,
                memory(gx), gxOff, d.p);
    }

    /**
     * The weights of the input-gradient convolution: {@code [out, in/g, kH, kW]} becomes
     * {@code [in, out/g, kH, kW]} group by group, each kernel turned by 180 degrees.
     */
    private static Tensor flippedTransposed(Tensor w, Dims d) {
        int kh = d.g.kH();
        int kw = d.g.kW();
        try (var ignored = Autograd.noGrad()) {
            Tensor rows = Tensor.arange(kh - 1, -1, -1, DType.INT64);
            Tensor cols = Tensor.arange(kw - 1, -1, -1, DType.INT64);
            return w.view(d.groups, d.og, d.cg, kh, kw).transpose(1, 2).indexSelect(3, rows).indexSelect(4, cols)
                    .contiguous().view(d.c, d.og, kh, kw);
        }
    }

    /**
     * {@code t} itself when contiguous, else a contiguous copy in this thread's scratch slot: the upstream
     * gradient is often an expanded view (from a sum) and the copy never leaves the backward pass.
     */
    private static Tensor contiguousInScratch(Tensor t, int slot) {
        if (t.isContiguous()) {
            return t;
        }
        long bytes = (long) t.numel() * t.dtype().byteSize();
        Tensor copy = Tensor.fromSegment(Scratch.get(slot, bytes), t.dtype(), t.shape());
        try (var ignored = Autograd.noGrad()) {
            copy.copyi(t);
        }
        return copy;
    }

    static void gemm(boolean isFloat, boolean ta, boolean tb, int m, int n, int k, MemorySegment a, long ao,
            int lda, MemorySegment b, long bo, int ldb, double beta, MemorySegment c, long co, int ldc) {
        if (isFloat) {
            Gemm.sgemm(ta, tb, m, n, k, 1f, a, ao, lda, b, bo, ldb, (float) beta, c, co, ldc);
        } else {
            Gemm.dgemm(ta, tb, m, n, k, 1.0, a, ao, lda, b, bo, ldb, beta, c, co, ldc);
        }
    }

    private static Dims check(Tensor x, Tensor w, Tensor b, int[] stride, int[] padding, int[] dilation, int groups) {
        if (x.dim() != 4) {
            throw new IllegalArgumentException("conv2d: expected a 4-d input [N, C, H, W], got shape "
                    + Shapes.str(x.shape()));
        }
        if (w.dim() != 4) {
            throw new IllegalArgumentException("conv2d: expected a 4-d weight [out, in/groups, kH, kW], got shape "
                    + Shapes.str(w.shape()));
        }
        if (x.dtype() != w.dtype() || (x.dtype() != DType.FLOAT32 && x.dtype() != DType.FLOAT64)) {
            throw new IllegalArgumentException("conv2d: input and weight must both be float32 or both float64, got "
                    + x.dtype() + " and " + w.dtype());
        }
        if (groups < 1 || x.size(1) % groups != 0 || w.size(0) % groups != 0) {
            throw new IllegalArgumentException("conv2d: groups=" + groups + " must be >= 1 and divide both the input "
                    + "channels (" + x.size(1) + ") and the output channels (" + w.size(0) + ")");
        }
        if (w.size(1) * groups != x.size(1)) {
            throw new IllegalArgumentException("conv2d: weight of shape " + Shapes.str(w.shape()) + " with groups="
                    + groups + " expects input to have " + w.size(1) * groups + " channels, but got input of shape "
                    + Shapes.str(x.shape()));
        }
        if (b != null && (b.dim() != 1 || b.size(0) != w.size(0) || b.dtype() != x.dtype())) {
            throw new IllegalArgumentException("conv2d: bias must be a " + x.dtype() + " vector of " + w.size(0)
                    + " elements, got " + b.dtype() + " " + Shapes.str(b.shape()));
        }
        ConvGeometry g = ConvGeometry.of("conv2d", x.size(2), x.size(3), new int[] {w.size(2), w.size(3)}, stride,
                padding, dilation, false);
        int cg = x.size(1) / groups;
        int og = w.size(0) / groups;
        return new Dims(x.size(0), x.size(1), w.size(0), groups, cg, og, cg * w.size(2) * w.size(3), g.outPlane(), g,
                x.dtype() == DType.FLOAT32);
    }

    /** The memory of {@code t}'s storage; the kernels address it from {@code t}'s storage offset. */
    static MemorySegment memory(Tensor t) {
        return TensorInternals.storage(t).segment();
    }
}
