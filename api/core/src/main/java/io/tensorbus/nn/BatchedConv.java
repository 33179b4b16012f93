package io.tensorbus.nn;

import io.tensorbus.internal.tensor.FloatKernels;
import io.tensorbus.internal.tensor.Im2Col;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.internal.tensor.Scratch;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * conv2d on small planes with the whole batch lowered into one GEMM per group: the columns of every image
 * side by side ({@code [K, N * P]}). With one GEMM per image, small planes (28x28 digits, ResNet's last
 * stages) spent their time re-packing the weights once per image and in per-call overheads.
 */
final class BatchedConv {
    /**
     * Output planes below this many elements are lowered batch-wide: there the per-image weight packing and
     * call overheads outweigh the extra gather and scatter copies (measured on ResNet-50 and the tutorial net).
     */
    private static final int MAX_PLANE = 1024;
    /** Nor when the batch's columns would pass this many elements (they may be kept for backward). */
    private static final long MAX_COLUMNS = 1L << 22;

    private BatchedConv() {
    }

    static boolean applies(ConvOps.Dims d) {
        return d.n() > 1 && d.p() < MAX_PLANE && (long) d.k() * d.n() * d.p() <= MAX_COLUMNS;
    }

    private static long bytes(ConvOps.Dims d, long elements) {
        return elements * (d.isFloat() ? 4 : 8);
    }

    /** Fills {@code cols} ({@code [K, N * P]}) with the columns of every image's group {@code gi}. */
    private static void columns(Tensor x, ConvOps.Dims d, int gi, MemorySegment cols) {
        long xOff = x.storageOffset() + (long) gi * d.cg() * d.g().inPlane();
        Im2Col.im2colBatch(ConvOps.memory(x), xOff, (long) d.c() * d.g().inPlane(), d.n(), d.cg(), d.g(), cols, 0,
                d.n() * d.p(), d.isFloat());
    }

    /**
     * Computes {@code out}, {@code bias} (may be null) added. With {@code keepColumns} the columns of every group
     * go to a tensor that is returned for the weight gradient ({@code [groups, K, N * P]}), so backward need not
     * unfold again; otherwise they live in scratch memory and null is returned.
     */
    static Tensor forward(Tensor x, Tensor w, Tensor bias, ConvOps.Dims d, Tensor out, boolean keepColumns) {
        int np = d.n() * d.p();
        long groupColumns = (long) d.k() * np;
        // im2col writes every column element, padding included.
        Tensor kept = keepColumns ? TensorInternals.uninitialized(x.dtype(), d.groups(), d.k(), np) : null;
        MemorySegment result = Scratch.get(1, bytes(d, (long) d.og() * np));
        Tensor b = bias == null ? null : bias.contiguous();
        for (int gi = 0; gi < d.groups(); gi++) {
            MemorySegment cols = kept != null ? kept.dataSegment().asSlice(bytes(d, gi * groupColumns))
                    : Scratch.get(0, bytes(d, groupColumns));
            columns(x, d, gi, cols);
            ConvOps.gemm(d.isFloat(), false, false, d.og(), np, d.k(), ConvOps.memory(w),
                    w.storageOffset() + (long) gi * d.og() * d.k(), d.k(), cols, 0, np, 0, result, 0, np);
            toPlanes(result, d, gi, out, b);
        }
        return kept;
    }

    /**
     * Moves group {@code gi}'s GEMM result ({@code [og, N * P]}) into {@code out}'s planes ({@code [N, O, P]}), adding
     * each channel's bias on the way (one pass instead of a copy and an add).
     */
    private static void toPlanes(MemorySegment result, ConvOps.Dims d, int gi, Tensor out, Tensor bias) {
        int p = d.p();
        int n = d.n();
        MemorySegment dst = ConvOps.memory(out);
        long base = out.storageOffset();
        MemorySegment bs = bias == null ? null : ConvOps.memory(bias);
        long bo = bias == null ? 0 : bias.storageOffset();
        Threads.parallelFor(0, d.og() * n, Threads.grain(p), (s, e) -> {
            for (int row = s; row < e; row++) {
                int o = row / n;
                int img = row % n;
                int channel = gi * d.og() + o;
                long from = (long) o * n * p + (long) img * p;
                long to = base + ((long) img * d.o() + channel) * p;
                if (bs == null) {
                    // A plain copy: adding a zero bias would turn -0.0 into 0.0.
                    MemorySegment.copy(result, bytes(d, from), dst, bytes(d, to), bytes(d, p));
                } else if (d.isFloat()) {
                    FloatKernels.addScalar(result, from, bs.getAtIndex(ValueLayout.JAVA_FLOAT, bo + channel), dst, to,
                            p);
                } else {
                    double c = bs.getAtIndex(ValueLayout.JAVA_DOUBLE, bo + channel);
                    for (int i = 0; i < p; i++) {
                        dst.setAtIndex(ValueLayout.JAVA_DOUBLE, to + i,
                                result.getAtIndex(ValueLayout.JAVA_DOUBLE, from + i) + c);
                    }
                }
            }
        });
    }

    /** Copies group {@code gi}'s planes of {@code gy} ({@code [N, O, P]}) into GEMM columns ({@code [og, N * P]}). */
    private static void toColumns(Tensor gy, ConvOps.Dims d, int gi, MemorySegment cols) {
        int p = d.p();
        int n = d.n();
        long bytes = bytes(d, p);
        MemorySegment src = ConvOps.memory(gy);
        long base = gy.storageOffset();
        Threads.parallelFor(0, d.og() * n, Threads.grain(p), (s, e) -> {
            for (int row = s; row < e; row++) {
                int o = row / n;
                int img = row % n;
                long from = base + ((long) img * d.o() + gi * d.og() + o) * p;
                long to = (long) o * n * p + (long) img * p;
                MemorySegment.copy(src, bytes(d, from), cols, bytes(d, to), bytes);
            }
        });
    }

    /**
     * Accumulates into {@code gw} and {@code gx} (zeroed by the caller; either may be null), reusing the
     * forward's {@code columns} when it kept them (else unfolding again).
     */
    static void backward(Tensor gy, Tensor x, Tensor w, ConvOps.Dims d, Tensor gx, Tensor gw, Tensor columns) {
        int np = d.n() * d.p();
        MemorySegment gyCols = Scratch.get(3, bytes(d, (long) d.og() * np));
        for (int gi = 0; gi < d.groups(); gi++) {
            toColumns(gy, d, gi, gyCols);
            if (gw != null) {
                MemorySegment cols;
                if (columns != null) {
                    cols = columns.dataSegment().asSlice(bytes(d, (long) gi * d.k() * np));
                } else {
                    cols = Scratch.get(0, bytes(d, (long) d.k() * np));
                    columns(x, d, gi, cols);
                }
                ConvOps.gemm(d.isFloat(), false, true, d.og(), d.k(), np, gyCols, 0, np, cols, 0, np, 0,
                        ConvOps.memory(gw), (long) gi * d.og() * d.k(), d.k());
            }
            if (gx != null) {
                MemorySegment gcols = Scratch.get(1, bytes(d, (long) d.k() * np));
                ConvOps.gemm(d.isFloat(), true, false, d.k(), np, d.og(), ConvOps.memory(w),
                        w.storageOffset() + (long) gi * d.og() * d.k(), d.k(), gyCols, 0, np, 0, gcols, 0, np);
                Im2Col.col2imBatch(gcols, 0, np, d.n(), d.cg(), d.g(), ConvOps.memory(gx),
                        (long) gi * d.cg() * d.g().inPlane(), (long) d.c() * d.g().inPlane(), d.isFloat());
            }
        }
    }
}
