package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Elementwise;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.SoftMax;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Sums, means, max/min/argmax over dimensions, softmax and log-softmax, with their backward. */
final class ReduceOps {
    private ReduceOps() {
    }

    /** The reduced dimensions as a sorted boolean mask; null means all. */
    private static boolean[] dimMask(int rank, int[] dims) {
        boolean[] mask = new boolean[rank];
        if (dims == null) {
            Arrays.fill(mask, true);
            return mask;
        }
        for (int d : dims) {
            int n = Shapes.normalizeDim(d, rank);
            if (rank == 0) {
                continue; // a 0-d tensor reduces over "dimension 0" to itself, as PyTorch
            }
            if (mask[n]) {
                throw new IllegalArgumentException("dimension " + n + " appears multiple times in the list of dims "
                        + Arrays.toString(dims));
            }
            mask[n] = true;
        }
        return mask;
    }

    private static int[] reducedShape(int[] shape, boolean[] mask, boolean keepDim) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < shape.length; i++) {
            if (!mask[i]) {
                out.add(shape[i]);
            } else if (keepDim) {
                out.add(1);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** {@code t} with the reduced dimensions moved last and made contiguous, viewed as [outer, inner]. */
    private static Tensor rowsOf(Tensor t, boolean[] mask) {
        int r = t.dim();
        int[] perm = new int[r];
        int k = 0;
        int outer = 1;
        int inner = 1;
        int[] shape = t.shape();
        for (int i = 0; i < r; i++) {
            if (!mask[i]) {
                perm[k++] = i;
                outer *= shape[i];
            }
        }
        for (int i = 0; i < r; i++) {
            if (mask[i]) {
                perm[k++] = i;
                inner *= shape[i];
            }
        }
        try (var ignored = Autograd.noGrad()) {
            return t.permute(perm).contiguous().view(outer, inner);
        }
    }

    static Tensor sum(Tensor t, int[] dims, boolean keepDim) {
        int[] inShape = t.shape();
        boolean[] mask = dimMask(t.dim(), dims);
        int[] outShape = reducedShape(inShape, mask, keepDim);
        DType ct = Ops.computeType(t.dtype());
        DType outType = ct.isFloatingPoint() ? ct : DType.INT64;
        DType resultType = t.dtype().isFloatingPoint() ? t.dtype() : DType.INT64;
        if (DeviceOps.on(t)) {
            Tensor sums = DeviceOps.sumRows(rowsOf(t.dtype() == outType ? t : ViewOps.copyRaw(t, outType), mask))
                    .view(outShape);
            Tensor result = resultType == sums.dtype() ? sums : ViewOps.copyRaw(sums, resultType);
            return Autograd.record("SumBackward1", result, g -> new Tensor[] {expandBack(g[0], inShape, mask, keepDim)},
                    t);
        }
        Tensor out = Tensor.empty(outType, outShape);
        if (ct == DType.FLOAT32 && t.dtype() == ct && sumTrailingRuns(t, mask, out)) {
            return Autograd.record("SumBackward1", out, g -> new Tensor[] {expandBack(g[0], inShape, mask, keepDim)},
                    t);
        }
        Tensor rows = rowsOf(t.dtype() == ct ? t : ViewOps.copyRaw(t, ct), mask);
        int outer = rows.size(0);
        int inner = rows.size(1);
        MemorySegment src = rows.storage().segment();
        MemorySegment dst = out.storage().segment();
        long base = rows.storageOffset();
        Threads.parallelFor(0, outer, Math.max(1, 32768 / Math.max(inner, 1)), (s, e) -> {
            for (int o = s; o < e; o++) {
                long off = base + (long) o * inner;
                if (ct == DType.FLOAT32) {
                    dst.setAtIndex(ValueLayout.JAVA_FLOAT, o, (float) sumFloat(src, off, inner));
                } else if (ct == DType.FLOAT64) {
                    dst.setAtIndex(ValueLayout.JAVA_DOUBLE, o, sumDouble(src, off, inner));
                } else {
                    long acc = 0;
                    for (int i = 0; i < inner; i++) {
                        acc += Access.getLong(src, ct, off + i);
                    }
                    dst.setAtIndex(ValueLayout.JAVA_LONG, o, acc);
                }
            }
        });
        Tensor result = resultType == outType ? out : ViewOps.copyRaw(out, resultType);
        return Autograd.record("SumBackward1", result, g -> new Tensor[] {expandBack(g[0], inShape, mask, keepDim)}, t);
    }

    /** Runs shorter than this are summed from a permuted copy, whose rows are longer. */
    private static final long MIN_RUN = 16;

    /**
     * Float32 sums of a contiguous {@code t} whose last dimensions are all reduced, straight from its storage:
     * each output adds up whole runs of that trailing block, so a convolution's bias gradient ([N, C, H, W] over
     * 0, 2 and 3) needs no permuted copy of the gradient. Returns false, writing nothing, when {@code t} is laid
     * out otherwise.
     */
    private static boolean sumTrailingRuns(Tensor t, boolean[] mask, Tensor out) {
        int r = t.dim();
        if (r == 0 || !mask[r - 1] || !t.isContiguous()) {
            return false;
        }
        int[] shape = t.shape();
        int lead = r;
        long run = 1;
        while (lead > 0 && mask[lead - 1]) {
            run *= shape[--lead];
        }
        if (run < MIN_RUN || run > Integer.MAX_VALUE) {
            return false;
        }
        long[] stride = new long[lead];
        long step = run;
        for (int i = lead - 1; i >= 0; i--) {
            stride[i] = step;
            step *= shape[i];
        }
        long[][] kept = dimsWhere(shape, stride, mask, lead, false);
        long[][] middle = dimsWhere(shape, stride, mask, lead, true);
        int outer = (int) out.numel();
        int inner = (int) run;
        int rows = Math.toIntExact(t.numel() / Math.max(1, (long) outer * inner));
        MemorySegment src = t.storage().segment();
        MemorySegment dst = out.storage().segment();
        long base = t.storageOffset();
        Threads.parallelFor(0, outer, Threads.grain((long) rows * inner), (s, e) -> {
            for (int o = s; o < e; o++) {
                long at = base + offsetOf(o, kept);
                double acc = 0;
                for (int m = 0; m < rows; m++) {
                    acc += sumFloat(src, at + offsetOf(m, middle), inner);
                }
                dst.setAtIndex(ValueLayout.JAVA_FLOAT, o, (float) acc);
            }
        });
        return true;
    }

    /**
     * The sizes ({@code [0]}) and element strides ({@code [1]}) of the first {@code lead} dims that are reduced or not.
     */
    private static long[][] dimsWhere(int[] shape, long[] stride, boolean[] mask, int lead, boolean reduced) {
        int n = 0;
        for (int i = 0; i < lead; i++) {
            n += mask[i] == reduced ? 1 : 0;
        }
        long[][] dims = new long[2][n];
        for (int i = 0, k = 0; i < lead; i++) {
            if (mask[i] == reduced) {
                dims[0][k] = shape[i];
                dims[1][k++] = stride[i];
            }
        }
        return dims;
    }

    /** The element offset of row-major index {@code index} over {@code dims} (sizes and strides). */
    private static long offsetOf(long index, long[][] dims) {
        long off = 0;
        for (int k = dims[0].length - 1; k >= 0 && index > 0; k--) {
            off += index % dims[0][k] * dims[1][k];
            index /= dims[0][k];
        }
        return off;
    }

    private static double sumFloat(MemorySegment s, long off, int n) {
        double a0 = 0;
        double a1 = 0;
        int i = 0;
        for (; i + 1 < n; i += 2) {
            a0 += s.getAtIndex(ValueLayout.JAVA_FLOAT, off + i);
            a1 += s.getAtIndex(ValueLayout.JAVA_FLOAT, off + i + 1);
        }
        if (i < n) {
            a0 += s.getAtIndex(ValueLayout.JAVA_FLOAT, off + i);
        }
        return a0 + a1;
    }

    private static double sumDouble(MemorySegment s, long off, int n) {
        double acc = 0;
        double comp = 0;
        for (int i = 0; i < n; i++) {
            // Kahan summation: float64 results match PyTorch's pairwise sums to the last bits.
            double y = s.getAtIndex(ValueLayout.JAVA_DOUBLE, off + i) - comp;
            double tt = acc + y;
            comp = (tt - acc) - y;
            acc = tt;
        }
        return acc;
    }

    /** Broadcasts a reduced gradient back over the input shape. */
    private static Tensor expandBack(Tensor g, int[] inShape, boolean[] mask, boolean keepDim) {
        Tensor x = g;
        if (!keepDim) {
            int[] kept = reducedShape(inShape, mask, true);
            x = x.reshape(kept);
        }
        return x.expand(inShape);
    }

    static Tensor mean(Tensor t, int[] dims, boolean keepDim) {
        if (!t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("mean(): could not infer output dtype; input dtype must be floating"
                    + " point, got " + t.dtype() + " (convert with to(DType.FLOAT32))");
        }
        boolean[] mask = dimMask(t.dim(), dims);
        long count = 1;
        int[] shape = t.shape();
        for (int i = 0; i < shape.length; i++) {
            if (mask[i]) {
                count *= shape[i];
            }
        }
        return sum(t, dims, keepDim).div((double) count);
    }

    static Tensor sumToShape(Tensor t, int[] target) {
        int[] shape = t.shape();
        if (Arrays.equals(shape, target)) {
            return t;
        }
        int lead = shape.length - target.length;
        if (lead < 0) {
            throw new IllegalArgumentException("sumToShape: shape " + Shapes.str(shape) + " has fewer dimensions than "
                    + Shapes.str(target));
        }
        List<Integer> dims = new ArrayList<>();
        for (int i = 0; i < shape.length; i++) {
            if (i < lead || (target[i - lead] == 1 && shape[i] != 1)) {
                dims.add(i);
            } else if (target[i - lead] != shape[i]) {
                throw new IllegalArgumentException("sumToShape: shape " + Shapes.str(shape)
                        + " is not a broadcast of " + Shapes.str(target));
            }
        }
        Tensor s = dims.isEmpty() ? t : sum(t, dims.stream().mapToInt(Integer::intValue).toArray(), true);
        return s.reshape(target);
    }

    static Tensor maxAll(Tensor t, boolean max) {
        if (t.numel() == 0) {
            throw new IllegalArgumentException((max ? "max" : "min") + "(): expected a non-empty tensor");
        }
        Tensor[] r = maxDim(t.reshape(-1), 0, false, max);
        Tensor value = r[0].detach();
        if (!Autograd.needsGrad(t)) {
            return value;
        }
        SavedTensor s = SavedTensor.save(t);
        return Autograd.record(max ? "MaxBackward1" : "MinBackward1", value, g -> {
            // Ties share the gradient evenly, as PyTorch's full max/min reduction.
            Tensor x = s.unpack();
            Tensor mask = Ops.binaryRaw(new Elementwise.Binary("isMax", null,
                    (u, v) -> u == v || (Double.isNaN(u) && Double.isNaN(v)) ? 1 : 0, null),
                    x, value, DType.FLOAT64, g[0].dtype());
            return new Tensor[] {mask.mul(g[0].div(mask.sum()))};
        }, t);
    }

    /** Values and int64 indices of the max (or min) along {@code dim}; NaN wins, first index on ties. */
    static Tensor[] maxDim(Tensor t, int dim, boolean keepDim, boolean max) {
        int d = Shapes.normalizeDim(dim, t.dim());
        int[] inShape = t.shape();
        if (t.dim() > 0 && inShape[d] == 0) {
            throw new IllegalArgumentException((max ? "max" : "min") + "(): cannot reduce over a zero-size dimension "
                    + d);
        }
        boolean[] mask = new boolean[t.dim()];
        if (t.dim() > 0) {
            mask[d] = true;
        }
        int[] outShape = reducedShape(inShape, mask, keepDim);
        Tensor rows = rowsOf(t, mask);
        if (DeviceOps.on(t)) {
            Tensor[] found = DeviceOps.maxRows(rows, max);
            return recordMax(t, d, keepDim, max, found[0].view(outShape), found[1].view(outShape));
        }
        int outer = rows.size(0);
        int inner = rows.size(1);
        Tensor values = Tensor.empty(t.dtype(), outShape);
        Tensor indices = Tensor.empty(DType.INT64, outShape);
        MemorySegment src = rows.storage().segment();
        long base = rows.storageOffset();
        DType dt = t.dtype();
        for (int o = 0; o < outer; o++) {
            long off = base + (long) o * inner;
            if (!dt.isFloatingPoint()) {
                int best = bestLong(src, dt, off, inner, max);
                Access.setLong(values.storage().segment(), dt, o, Access.getLong(src, dt, off + best));
                Access.setLong(indices.storage().segment(), DType.INT64, o, best);
                continue;
            }
            int best = 0;
            double bv = Access.getDouble(src, dt, off);
            for (int i = 1; i < inner && !Double.isNaN(bv); i++) {
                double v = Access.getDouble(src, dt, off + i);
                if (Double.isNaN(v) || (max ? v > bv : v < bv)) {
                    best = i;
                    bv = v;
                }
            }
            Access.setDouble(values.storage().segment(), dt, o, bv);
            Access.setLong(indices.storage().segment(), DType.INT64, o, best);
        }
        return recordMax(t, d, keepDim, max, values, indices);
    }

    private static Tensor[] recordMax(Tensor t, int d, boolean keepDim, boolean max, Tensor values, Tensor indices) {
        int[] inShape = t.shape();
        if (Autograd.needsGrad(t)) {
            Tensor idx = keepDim || t.dim() == 0 ? indices : indices.unsqueeze(d);
            Autograd.record(max ? "MaxBackward0" : "MinBackward0", values, g -> {
                Tensor gg = keepDim || t.dim() == 0 ? g[0] : g[0].unsqueeze(d);
                Tensor z = Tensor.zeros(g[0].device(), g[0].dtype(), inShape);
                return new Tensor[] {t.dim() == 0 ? g[0] : z.scatter(d, idx, gg)};
            }, t);
        }
        return new Tensor[] {values, indices};
    }

    /** Index of the first maximum (or minimum) of {@code n} integers, compared exactly as longs. */
    private static int bestLong(MemorySegment src, DType dt, long off, int n, boolean max) {
        int best = 0;
        long bv = Access.getLong(src, dt, off);
        for (int i = 1; i < n; i++) {
            long v = Access.getLong(src, dt, off + i);
            if (max ? v > bv : v < bv) {
                best = i;
                bv = v;
            }
        }
        return best;
    }

    static Tensor logSoftmax(Tensor t, int dim) {
        return softmaxOf(t, dim, true);
    }

    static Tensor softmax(Tensor t, int dim) {
        return softmaxOf(t, dim, false);
    }

    /**
     * Softmax or log-softmax along {@code dim} in one kernel, computed in float64 for float64 input and in float32
     * otherwise; the result has the input's floating dtype (float32 for integer input).
     */
    private static Tensor softmaxOf(Tensor t, int dim, boolean log) {
        int d = Shapes.normalizeDim(dim, t.dim());
        DType ct = t.dtype() == DType.FLOAT64 ? DType.FLOAT64 : DType.FLOAT32;
        int[] slices = slices(t.shape(), d);
        Tensor y = Tensor.uninitialized(ct, t.shape());
        if (DeviceOps.on(t)) {
            return deviceSoftmax(t, d, log, ct);
        }
        try (var ignored = Autograd.noGrad()) {
            Tensor x = t.to(ct).contiguous();
            // dataSegment(): a contiguous view may start anywhere in its storage.
            SoftMax.forward(log, x.dataSegment(), y.dataSegment(), slices[0], slices[1], slices[2],
                    ct == DType.FLOAT32);
        }
        DType outType = t.dtype().isFloatingPoint() ? t.dtype() : ct;
        Tensor out = outType == ct ? y : y.to(outType);
        SavedTensor saved = Autograd.needsGrad(t) ? SavedTensor.save(y) : null;
        return Autograd.record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", out, g -> {
            Tensor grad = g[0].to(ct).contiguous();
            Tensor gradIn = Tensor.uninitialized(ct, t.shape());
            SoftMax.backward(log, grad.dataSegment(), saved.unpack().dataSegment(), gradIn.dataSegment(), slices[0],
                    slices[1], slices[2], ct == DType.FLOAT32);
            return new Tensor[] {gradIn.dtype() == t.dtype() ? gradIn : gradIn.to(t.dtype())};
        }, t);
    }

    private static Tensor deviceSoftmax(Tensor t, int d, boolean log, DType ct) {
        Tensor y;
        try (var ignored = Autograd.noGrad()) {
            y = DeviceOps.softmax(t.to(ct), d, log);
        }
        DType outType = t.dtype().isFloatingPoint() ? t.dtype() : ct;
        Tensor out = outType == ct ? y : ViewOps.copyRaw(y, outType);
        SavedTensor saved = Autograd.needsGrad(t) ? SavedTensor.save(y) : null;
        return Autograd.record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", out, g -> {
            Tensor gradIn = DeviceOps.softmaxBackward(g[0], saved.unpack(), d, log);
            return new Tensor[] {gradIn.dtype() == t.dtype() ? gradIn : gradIn.to(t.dtype())};
        }, t);
    }

    /** {@code [outer, n, inner]}: the shape seen as the slices along {@code d} (a 0-d tensor is one slice of 1). */
    private static int[] slices(int[] shape, int d) {
        int outer = 1;
        int inner = 1;
        for (int i = 0; i < d; i++) {
            outer *= shape[i];
        }
        for (int i = d + 1; i < shape.length; i++) {
            inner *= shape[i];
        }
        return new int[] {outer, shape.length == 0 ? 1 : shape[d], inner};
    }
}
