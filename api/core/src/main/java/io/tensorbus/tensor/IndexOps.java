package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.Strided;
import java.lang.foreign.MemorySegment;

/** Indexing: {@code indexSelect}, {@code gather}, {@code scatter}, {@code oneHot}, with their backward. */
final class IndexOps {
    private IndexOps() {
    }

    /** The indices of {@code index}, read on the host, after checking its dtype and that it lives with {@code t}. */
    private static long[] indices(Tensor t, Tensor index, String op) {
        if (index.dtype() != DType.INT64 && index.dtype() != DType.INT32) {
            throw new IllegalArgumentException(op + ": index must be int64 or int32, got " + index.dtype());
        }
        sameDevice(op, t, index, "index");
        return index.toLongArray();
    }

    private static int checkIndex(long i, int size, String op, int dim) {
        long j = i < 0 ? i + size : i;
        if (j < 0 || j >= size) {
            throw new IllegalArgumentException(op + ": index " + i + " is out of bounds for dimension " + dim
                    + " with size " + size);
        }
        return (int) j;
    }

    static Tensor indexSelect(Tensor t, int dim, Tensor index) {
        int d = Shapes.normalizeDim(dim, t.dim());
        if (index.dim() > 1) {
            throw new IllegalArgumentException("indexSelect: index must be 0-d or 1-d, got shape "
                    + Shapes.str(index.shape()));
        }
        long[] idx = indices(t, index, "indexSelect");
        int[] shape = t.shape();
        int size = shape[d];
        shape[d] = idx.length;
        int[] inShape = t.shape();
        if (DeviceOps.on(t)) {
            long[] offs = selectOffsets(idx, inShape, d);
            Tensor out = DeviceIndexOps.take("indexSelect", DeviceOps.contiguous(t), offs, shape);
            return Autograd.record("IndexSelectBackward0", out, g -> {
                Tensor z = Tensor.zeros(g[0].device(), g[0].dtype(), inShape);
                DeviceIndexOps.addAt("indexSelect backward", z, offs, g[0]);
                return new Tensor[] {z};
            }, t);
        }
        Tensor out = Tensor.empty(t.dtype(), shape);
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < idx.length; i++) {
                Tensor src = t.select(d, checkIndex(idx[i], size, "indexSelect", d));
                Strided.copy(src.view(), out.select(d, i).view(), src.shape());
            }
        }
        return Autograd.record("IndexSelectBackward0", out, g -> {
            Tensor z = Tensor.zeros(g[0].dtype(), inShape);
            for (int i = 0; i < idx.length; i++) {
                z.select(d, (int) (idx[i] < 0 ? idx[i] + size : idx[i])).addi(g[0].select(d, i));
            }
            return new Tensor[] {z};
        }, t);
    }

    /**
     * The offsets, in a contiguous tensor of {@code shape}, of each element of its {@code indexSelect} along
     * {@code d}: row-major over {@code [outer, idx.length, inner]}.
     */
    private static long[] selectOffsets(long[] idx, int[] shape, int d) {
        long outer = 1;
        for (int k = 0; k < d; k++) {
            outer *= shape[k];
        }
        long inner = 1;
        for (int k = d + 1; k < shape.length; k++) {
            inner *= shape[k];
        }
        int size = shape[d];
        long[] rows = new long[idx.length];
        for (int j = 0; j < idx.length; j++) {
            rows[j] = checkIndex(idx[j], size, "indexSelect", d);
        }
        long[] offs = new long[Math.toIntExact(outer * idx.length * inner)];
        int at = 0;
        for (long o = 0; o < outer; o++) {
            for (long row : rows) {
                long base = (o * size + row) * inner;
                for (long r = 0; r < inner; r++) {
                    offs[at++] = base + r;
                }
            }
        }
        return offs;
    }

    private static void sameDevice(String op, Tensor t, Tensor other, String what) {
        if (!t.device().equals(other.device())) {
            throw new IllegalArgumentException(op + ": expected the tensor and its " + what + " on one device, got "
                    + t.device() + " and " + other.device() + " (move one with to(Device))");
        }
    }

    /** Calls {@code body(position in index, offset in target)} for each element of {@code index}. */
    private interface Visit {
        void at(long indexPos, long targetOffset);
    }

    /** Walks an index tensor along {@code dim} of a target with the given shape, strides and offset. */
    private static void walk(long[] idx, int[] idxShape, int dim, Tensor target, String op, Visit visit) {
        int[] ts = target.shape();
        int[] st = target.strides();
        if (idxShape.length != ts.length) {
            throw new IllegalArgumentException(op + ": index has " + idxShape.length + " dimensions but the tensor has "
                    + ts.length);
        }
        int rank = idxShape.length;
        if (rank == 0 && idx.length == 1) {
            checkIndex(idx[0], 1, op, 0);
        }
        int[] pos = new int[rank];
        for (long p = 0; p < idx.length; p++) {
            long off = target.storageOffset();
            for (int k = 0; k < rank; k++) {
                if (k != dim && pos[k] >= ts[k]) {
                    throw new IllegalArgumentException(op + ": index shape " + Shapes.str(idxShape)
                            + " is larger than the tensor's " + Shapes.str(ts) + " at dimension " + k);
                }
                int i = k == dim ? checkIndex(idx[(int) p], ts[k], op, dim) : pos[k];
                off += (long) i * st[k];
            }
            visit.at(p, off);
            for (int k = rank - 1; k >= 0 && ++pos[k] == idxShape[k]; k--) {
                pos[k] = 0;
            }
        }
    }

    /** The offset each element of {@code index} addresses, counted from {@code target}'s first element. */
    private static long[] offsets(long[] idx, int[] idxShape, int dim, Tensor target, String op) {
        long[] offs = new long[idx.length];
        long base = target.storageOffset();
        walk(idx, idxShape, dim, target, op, (p, off) -> offs[(int) p] = off - base);
        return offs;
    }

    static Tensor gather(Tensor t, int dim, Tensor index) {
        int d = Shapes.normalizeDim(dim, t.dim());
        long[] idx = indices(t, index, "gather");
        Tensor out = DeviceOps.on(t) ? deviceGather(t, d, index, idx) : hostGather(t, d, index, idx);
        int[] inShape = t.shape();
        return Autograd.record("GatherBackward0", out, g -> new Tensor[] {
            scatterAdd(Tensor.zeros(g[0].device(), g[0].dtype(), inShape), d, index, g[0])}, t);
    }

    private static Tensor deviceGather(Tensor t, int d, Tensor index, long[] idx) {
        Tensor c = DeviceOps.contiguous(t);
        return DeviceIndexOps.take("gather", c, offsets(idx, index.shape(), d, c, "gather"), index.shape());
    }

    private static Tensor hostGather(Tensor t, int d, Tensor index, long[] idx) {
        Tensor out = Tensor.empty(t.dtype(), index.shape());
        MemorySegment src = t.storage().segment();
        MemorySegment dst = out.storage().segment();
        DType dt = t.dtype();
        if (dt.isFloatingPoint()) {
            walk(idx, index.shape(), d, t, "gather",
                    (p, off) -> Access.setDouble(dst, dt, p, Access.getDouble(src, dt, off)));
        } else {
            walk(idx, index.shape(), d, t, "gather",
                    (p, off) -> Access.setLong(dst, dt, p, Access.getLong(src, dt, off)));
        }
        return out;
    }

    /** {@code target[index] += src} in place (duplicates accumulate); target must be contiguous. */
    static Tensor scatterAdd(Tensor target, int dim, Tensor index, Tensor src) {
        long[] idx = indices(target, index, "scatterAdd");
        if (DeviceOps.on(target)) {
            DeviceIndexOps.addAt("gather backward", target, offsets(idx, index.shape(), dim, target, "scatterAdd"),
                    src);
            return target;
        }
        double[] vals = src.contiguous().toDoubleArray();
        MemorySegment dst = target.storage().segment();
        DType dt = target.dtype();
        walk(idx, index.shape(), dim, target, "scatterAdd",
                (p, off) -> Access.setDouble(dst, dt, off, Access.getDouble(dst, dt, off) + vals[(int) p]));
        return target;
    }

    static Tensor scatter(Tensor t, int dim, Tensor index, Tensor src) {
        int d = Shapes.normalizeDim(dim, t.dim());
        long[] idx = indices(t, index, "scatter");
        Tensor srcPart = src.dim() == 0 ? src.expand(index.shape()) : src;
        checkSrc(index, srcPart);
        sameDevice("scatter", t, src, "source");
        Tensor out = ViewOps.copyRaw(t, t.dtype());
        Tensor vals = prefix(srcPart, index.shape());
        if (DeviceOps.on(out)) {
            DeviceIndexOps.put("scatter", out, offsets(idx, index.shape(), d, out, "scatter"), vals);
        } else if (t.dtype().isFloatingPoint()) {
            double[] v = vals.contiguous().toDoubleArray();
            MemorySegment dst = out.storage().segment();
            DType dt = t.dtype();
            walk(idx, index.shape(), d, out, "scatter", (p, off) -> Access.setDouble(dst, dt, off, v[(int) p]));
        } else {
            long[] v = vals.contiguous().toLongArray(); // integers past 2^53 stay exact
            MemorySegment dst = out.storage().segment();
            DType dt = t.dtype();
            walk(idx, index.shape(), d, out, "scatter", (p, off) -> Access.setLong(dst, dt, off, v[(int) p]));
        }
        return Autograd.record("ScatterBackward0", out, g -> new Tensor[] {
            g[0].scatter(d, index, 0.0),
            g[0].gather(d, index)}, t, src.dim() == 0 ? null : src);
    }

    private static void checkSrc(Tensor index, Tensor src) {
        int[] is = index.shape();
        int[] ss = src.shape();
        boolean ok = is.length == ss.length;
        for (int k = 0; ok && k < is.length; k++) {
            ok = is[k] <= ss[k];
        }
        if (!ok) {
            throw new IllegalArgumentException("scatter: index shape " + Shapes.str(is) + " must not exceed src shape "
                    + Shapes.str(ss) + " in any dimension");
        }
    }

    /** The leading box of {@code src} of size {@code shape}, a view. */
    private static Tensor prefix(Tensor src, int[] shape) {
        Tensor box = src;
        for (int k = 0; k < shape.length; k++) {
            box = box.narrow(k, 0, shape[k]);
        }
        return box;
    }

    static Tensor scatterValue(Tensor t, int dim, Tensor index, double value) {
        int d = Shapes.normalizeDim(dim, t.dim());
        long[] idx = indices(t, index, "scatter");
        Tensor out = ViewOps.copyRaw(t, t.dtype());
        if (DeviceOps.on(out)) {
            DeviceIndexOps.put("scatter", out, offsets(idx, index.shape(), d, out, "scatter"),
                    Placement.full(out.device(), out.dtype(), value, new int[] {1}));
        } else {
            MemorySegment dst = out.storage().segment();
            DType dt = t.dtype();
            walk(idx, index.shape(), d, out, "scatter", (p, off) -> Access.setDouble(dst, dt, off, value));
        }
        return Autograd.record("ScatterBackward1", out, g -> new Tensor[] {g[0].scatter(d, index, 0.0)}, t);
    }

    static Tensor oneHot(Tensor indices, int numClasses) {
        if (indices.dtype() != DType.INT64) {
            throw new IllegalArgumentException("oneHot is only applicable to int64 index tensors, got "
                    + indices.dtype());
        }
        long[] idx = indices.toLongArray();
        long max = -1;
        for (long i : idx) {
            if (i < 0) {
                throw new IllegalArgumentException("oneHot: class values must be non-negative, got " + i);
            }
            max = Math.max(max, i);
        }
        int classes = numClasses == -1 ? (int) max + 1 : numClasses;
        if (classes <= 0 || max >= classes) {
            throw new IllegalArgumentException("oneHot: class values must be smaller than numClasses (" + numClasses
                    + "), largest is " + max);
        }
        if (DeviceOps.on(indices)) {
            return DeviceIndexOps.oneHot(indices, classes);
        }
        Tensor out = Tensor.zeros(DType.INT64, ViewOps.insert(indices.shape(), indices.dim(), classes));
        MemorySegment s = out.storage().segment();
        for (int i = 0; i < idx.length; i++) {
            Access.setLong(s, DType.INT64, (long) i * classes + idx[i], 1);
        }
        return out;
    }
}
