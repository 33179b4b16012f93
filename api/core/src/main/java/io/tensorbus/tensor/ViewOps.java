package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.Strided;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** Views (shared storage), copies, dtype conversion, cat and stack, each with its backward. */
final class ViewOps {
    private ViewOps() {
    }

    static Tensor makeView(Tensor t, int[] shape, int[] strides, long offset) {
        Tensor base = t.base() != null ? t.base() : t;
        Tensor view = new Tensor(t.storage(), t.dtype(), shape, strides, offset, base);
        AutogradMeta.syncView(view);
        return view;
    }

    /** A contiguous copy without recording. */
    static Tensor copyRaw(Tensor t, DType dtype) {
        if (DeviceOps.on(t)) {
            return DeviceOps.copy(t, dtype);
        }
        Tensor out = Tensor.uninitialized(dtype, t.shape());
        Strided.copy(t.view(), out.view(), t.shape());
        return out;
    }

    static Tensor clone(Tensor t) {
        return Autograd.record("CloneBackward0", copyRaw(t, t.dtype()), g -> new Tensor[] {g[0]}, t);
    }

    static Tensor to(Tensor t, DType target) {
        Objects.requireNonNull(target, "dtype");
        if (t.dtype() == target) {
            return t;
        }
        return Autograd.record("ToCopyBackward0", copyRaw(t, target), g -> new Tensor[] {g[0]}, t);
    }

    static int[] inferShape(int numel, int[] shape, int[] original) {
        int[] s = shape.clone();
        int infer = -1;
        long known = 1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == -1) {
                if (infer >= 0) {
                    throw new IllegalArgumentException("only one dimension can be inferred (-1) in "
                            + Shapes.str(shape));
                }
                infer = i;
            } else if (s[i] < 0) {
                throw new IllegalArgumentException("invalid size " + s[i] + " in shape " + Shapes.str(shape));
            } else {
                known *= s[i];
            }
        }
        if (infer >= 0) {
            if (known == 0 || numel % known != 0) {
                throw new IllegalArgumentException("shape " + Shapes.str(shape) + " is invalid for input of size "
                        + numel + " (shape " + Shapes.str(original) + ")");
            }
            s[infer] = (int) (numel / known);
        } else if (known != numel) {
            throw new IllegalArgumentException("shape " + Shapes.str(shape) + " is invalid for input of size "
                    + numel + " (shape " + Shapes.str(original) + ")");
        }
        return s;
    }

    /** Strides for viewing (shape, strides) as newShape without a copy, or null when impossible. */
    static int[] viewStrides(int[] shape, int[] strides, int[] newShape) {
        if (Shapes.isContiguous(shape, strides)) {
            return Shapes.contiguousStrides(newShape);
        }
        // Walk groups of old dimensions that are contiguous among themselves (PyTorch's computeStride).
        int[] out = new int[newShape.length];
        int viewD = newShape.length - 1;
        long chunkBase = strides.length > 0 ? strides[strides.length - 1] : 1;
        long tensorNumel = 1;
        long viewNumel = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            tensorNumel *= shape[d];
            if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensorNumel * chunkBase)) {
                while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
                    out[viewD] = (int) (viewNumel * chunkBase);
                    viewNumel *= newShape[viewD];
                    viewD--;
                }
                if (viewNumel != tensorNumel) {
                    return null;
                }
                if (d > 0) {
                    chunkBase = strides[d - 1];
                    tensorNumel = 1;
                    viewNumel = 1;
                }
            }
        }
        return viewD == -1 ? out : null;
    }

    static Tensor view(Tensor t, int[] newShape) {
        int[] orig = t.shape();
        int[] s = inferShape(t.numel(), newShape, orig);
        int[] st = viewStrides(orig, t.strides(), s);
        if (st == null) {
            throw new IllegalArgumentException("view size " + Shapes.str(s) + " is not compatible with input "
                    + "tensor's size " + Shapes.str(orig) + " and stride " + Shapes.str(t.strides())
                    + "; use reshape(...) instead");
        }
        Tensor v = makeView(t, s, st, t.storageOffset());
        return Autograd.record("ViewBackward0", v, g -> new Tensor[] {g[0].reshape(orig)}, t);
    }

    static Tensor reshape(Tensor t, int[] newShape) {
        int[] s = inferShape(t.numel(), newShape, t.shape());
        return viewStrides(t.shape(), t.strides(), s) != null ? view(t, s) : view(clone(t), s);
    }

    static Tensor transpose(Tensor t, int d0, int d1) {
        int r = t.dim();
        int a = Shapes.normalizeDim(d0, r);
        int b = Shapes.normalizeDim(d1, r);
        if (r == 0) {
            return t;
        }
        int[] shape = t.shape();
        int[] strides = t.strides();
        swap(shape, a, b);
        swap(strides, a, b);
        Tensor v = makeView(t, shape, strides, t.storageOffset());
        return Autograd.record("TransposeBackward0", v, g -> new Tensor[] {g[0].transpose(a, b)}, t);
    }

    private static void swap(int[] x, int i, int j) {
        int tmp = x[i];
        x[i] = x[j];
        x[j] = tmp;
    }

    static Tensor permute(Tensor t, int[] dims) {
        int r = t.dim();
        if (dims.length != r) {
            throw new IllegalArgumentException("permute: number of dims " + dims.length + " doesn't match the tensor's "
                    + r + " dimensions");
        }
        int[] shape = new int[r];
        int[] strides = new int[r];
        int[] inverse = new int[r];
        boolean[] seen = new boolean[r];
        int[] ts = t.shape();
        int[] tst = t.strides();
        for (int i = 0; i < r; i++) {
            int d = Shapes.normalizeDim(dims[i], r);
            if (seen[d]) {
                throw new IllegalArgumentException("permute: dimension " + d + " repeats in " + Arrays.toString(dims));
            }
            seen[d] = true;
            shape[i] = ts[d];
            strides[i] = tst[d];
            inverse[d] = i;
        }
        Tensor v = makeView(t, shape, strides, t.storageOffset());
        return Autograd.record("PermuteBackward0", v, g -> new Tensor[] {g[0].permute(inverse)}, t);
    }

    static Tensor narrow(Tensor t, int dim, int start, int length) {
        requireDims("narrow", t);
        int d = Shapes.normalizeDim(dim, t.dim());
        int size = t.shape()[d];
        int s = start < 0 ? start + size : start;
        if (s < 0 || length < 0 || (long) s + length > size) {
            throw new IllegalArgumentException("narrow: start " + start + " + length " + length
                    + " exceeds dimension " + d + " of size " + size);
        }
        return slice(t, d, s, s + length, 1);
    }

    static Tensor slice(Tensor t, int dim, int start, int end, int step) {
        requireDims("slice", t);
        int d = Shapes.normalizeDim(dim, t.dim());
        if (step <= 0) {
            throw new IllegalArgumentException("slice step must be positive, got " + step);
        }
        int[] shape = t.shape();
        int[] strides = t.strides();
        int size = shape[d];
        int s = clampIndex(start, size);
        int e = Math.max(s, clampIndex(end, size));
        int len = (int) (((long) e - s + step - 1) / step);
        long offset = t.storageOffset() + (long) s * strides[d];
        shape[d] = len;
        strides[d] *= step;
        int[] orig = t.shape();
        Tensor v = makeView(t, shape, strides, offset);
        return Autograd.record("SliceBackward0", v, g -> {
            Tensor z = Tensor.zeros(g[0].device(), g[0].dtype(), orig);
            slice(z, d, s, e, step).copyi(g[0]);
            return new Tensor[] {z};
        }, t);
    }

    /** Views along a dimension need one: a 0-d tensor has none. */
    static void requireDims(String op, Tensor t) {
        if (t.dim() == 0) {
            throw new IllegalArgumentException(op + "() cannot be applied to a 0-dim tensor; unsqueeze(0) it first");
        }
    }

    private static int clampIndex(int i, int size) {
        int j = i < 0 ? i + size : i;
        return Math.max(0, Math.min(size, j));
    }

    static Tensor select(Tensor t, int dim, int index) {
        int d = Shapes.normalizeDim(dim, t.dim());
        if (t.dim() == 0) {
            throw new IllegalArgumentException("select() cannot be applied to a 0-dim tensor");
        }
        int size = t.shape()[d];
        int i = index < 0 ? index + size : index;
        if (i < 0 || i >= size) {
            throw new IllegalArgumentException("select(): index " + index + " out of range for dimension " + d
                    + " of size " + size);
        }
        int[] shape = remove(t.shape(), d);
        int[] strides = remove(t.strides(), d);
        long offset = t.storageOffset() + (long) i * t.strides()[d];
        int[] orig = t.shape();
        Tensor v = makeView(t, shape, strides, offset);
        return Autograd.record("SelectBackward0", v, g -> {
            Tensor z = Tensor.zeros(g[0].device(), g[0].dtype(), orig);
            select(z, d, i).copyi(g[0]);
            return new Tensor[] {z};
        }, t);
    }

    static int[] remove(int[] a, int i) {
        int[] out = new int[a.length - 1];
        System.arraycopy(a, 0, out, 0, i);
        System.arraycopy(a, i + 1, out, i, a.length - i - 1);
        return out;
    }

    static int[] insert(int[] a, int i, int v) {
        int[] out = new int[a.length + 1];
        System.arraycopy(a, 0, out, 0, i);
        out[i] = v;
        System.arraycopy(a, i, out, i + 1, a.length - i);
        return out;
    }

    static List<Tensor> split(Tensor t, int splitSize, int dim) {
        requireDims("split", t);
        int d = Shapes.normalizeDim(dim, t.dim());
        if (splitSize <= 0) {
            throw new IllegalArgumentException("split size must be positive, got " + splitSize);
        }
        int size = t.shape()[d];
        int n = Math.max(1, (size + splitSize - 1) / splitSize);
        int[] sizes = new int[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = Math.min(splitSize, size - i * splitSize);
        }
        return splitSizes(t, sizes, d);
    }

    static List<Tensor> splitSizes(Tensor t, int[] sizes, int dim) {
        requireDims("split", t);
        int d = Shapes.normalizeDim(dim, t.dim());
        int total = 0;
        for (int s : sizes) {
            if (s < 0) {
                throw new IllegalArgumentException("split sizes must be >= 0, got " + Arrays.toString(sizes));
            }
            total += s;
        }
        if (total != t.shape()[d]) {
            throw new IllegalArgumentException("split sizes " + Arrays.toString(sizes) + " sum to " + total
                    + " but dimension " + d + " has size " + t.shape()[d]);
        }
        Tensor[] parts = new Tensor[sizes.length];
        int start = 0;
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < sizes.length; i++) {
                parts[i] = slice(t, d, start, start + sizes[i], 1);
                start += sizes[i];
            }
        }
        Autograd.recordMulti("SplitWithSizesBackward0", parts, g -> new Tensor[] {cat(Arrays.asList(g), d)}, t);
        return List.of(parts);
    }

    static List<Tensor> chunk(Tensor t, int chunks, int dim) {
        if (chunks <= 0) {
            throw new IllegalArgumentException("chunk expects chunks > 0, got " + chunks);
        }
        int size = t.size(dim);
        return split(t, Math.max(1, (size + chunks - 1) / chunks), dim);
    }

    static Tensor expand(Tensor t, int[] newShape) {
        int r = newShape.length;
        int[] ts = t.shape();
        if (r < ts.length) {
            throw new IllegalArgumentException("expand: the number of sizes provided (" + r + ") must be >= the"
                    + " number of dimensions in the tensor (" + ts.length + ")");
        }
        int[] shape = new int[r];
        int[] strides = new int[r];
        int lead = r - ts.length;
        for (int i = 0; i < r; i++) {
            int own = i < lead ? 1 : ts[i - lead];
            if (newShape[i] < -1) {
                throw new IllegalArgumentException("expand: invalid size " + newShape[i] + " at dimension " + i
                        + " of " + Arrays.toString(newShape) + " (sizes must be >= 0, or -1 to keep)");
            }
            int want = newShape[i] == -1 ? own : newShape[i];
            if (i < lead && newShape[i] == -1) {
                throw new IllegalArgumentException("expand: -1 is not allowed in a leading, new dimension");
            }
            if (own != want && own != 1) {
                throw new IllegalArgumentException("the expanded size of the tensor (" + want + ") must match the"
                        + " existing size (" + own + ") at non-singleton dimension " + i + "; target sizes "
                        + Arrays.toString(newShape) + ", tensor sizes " + Shapes.str(ts));
            }
            shape[i] = want;
            strides[i] = i < lead || own != want ? 0 : t.strides()[i - lead];
        }
        Tensor v = makeView(t, shape, strides, t.storageOffset());
        return Autograd.record("ExpandBackward0", v, g -> new Tensor[] {g[0]}, t);
    }

    static Tensor squeeze(Tensor t, Integer dim) {
        int[] ts = t.shape();
        List<Integer> keep = new ArrayList<>();
        int only = dim == null ? -1 : Shapes.normalizeDim(dim, t.dim());
        for (int i = 0; i < ts.length; i++) {
            boolean drop = ts[i] == 1 && (dim == null || i == only);
            if (!drop) {
                keep.add(i);
            }
        }
        int[] shape = new int[keep.size()];
        int[] strides = new int[keep.size()];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = ts[keep.get(i)];
            strides[i] = t.strides()[keep.get(i)];
        }
        Tensor v = makeView(t, shape, strides, t.storageOffset());
        return Autograd.record("SqueezeBackward0", v, g -> new Tensor[] {g[0].reshape(ts)}, t);
    }

    static Tensor unsqueeze(Tensor t, int dim) {
        int d = Shapes.normalizeDim(dim, t.dim() + 1);
        int[] ts = t.shape();
        int stride = d < ts.length ? t.strides()[d] * ts[d] : 1;
        Tensor v = makeView(t, insert(ts, d, 1), insert(t.strides(), d, stride), t.storageOffset());
        return Autograd.record("UnsqueezeBackward0", v, g -> new Tensor[] {g[0].reshape(ts)}, t);
    }

    static Tensor flatten(Tensor t, int startDim, int endDim) {
        if (t.dim() == 0) {
            return t.reshape(1);
        }
        int s = Shapes.normalizeDim(startDim, t.dim());
        int e = Shapes.normalizeDim(endDim, t.dim());
        if (s > e) {
            throw new IllegalArgumentException("flatten: startDim " + startDim + " comes after endDim " + endDim);
        }
        int[] ts = t.shape();
        int[] shape = new int[ts.length - (e - s)];
        int k = 0;
        for (int i = 0; i < ts.length; i++) {
            if (i <= s || i > e) {
                shape[k++] = ts[i];
            } else {
                shape[s] *= ts[i];
            }
        }
        return reshape(t, shape);
    }

    static Tensor cat(List<Tensor> tensors, int dim) {
        if (tensors == null || tensors.isEmpty()) {
            throw new IllegalArgumentException("cat expects a non-empty list of tensors");
        }
        Tensor first = tensors.get(0);
        if (first.dim() == 0) {
            throw new IllegalArgumentException("cat: zero-dimensional tensor (at position 0) cannot be concatenated;"
                    + " use stack, or unsqueeze(0) each tensor");
        }
        int d = Shapes.normalizeDim(dim, first.dim());
        DType dtype = first.dtype();
        int[] shape = first.shape();
        int total = 0;
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = Objects.requireNonNull(tensors.get(i), "tensor " + i);
            checkCatShape(first, t, d, i);
            if (!t.device().equals(first.device())) {
                throw new IllegalArgumentException("cat: expected all tensors on one device, got " + first.device()
                        + " (tensor 0) and " + t.device() + " (tensor " + i + "); move them with to(Device)");
            }
            dtype = Ops.promote(dtype, t.dtype());
            total += t.shape()[d];
        }
        shape[d] = total;
        Tensor out = DeviceOps.on(first) ? DeviceRuntimeKernels.emptyNear(first, dtype, shape)
                : Tensor.empty(dtype, shape);
        int[] sizes = new int[tensors.size()];
        int start = 0;
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < tensors.size(); i++) {
                Tensor t = tensors.get(i);
                sizes[i] = t.shape()[d];
                copyRawInto(slice(out, d, start, start + sizes[i], 1), t);
                start += sizes[i];
            }
        }
        return Autograd.record("CatBackward0", out, g -> splitSizes(g[0], sizes, d).toArray(new Tensor[0]),
                tensors.toArray(new Tensor[0]));
    }

    /** Writes {@code src} into the view {@code dst} of its shape, converting to {@code dst}'s dtype. */
    private static void copyRawInto(Tensor dst, Tensor src) {
        if (src.numel() == 0) {
            return;
        }
        if (DeviceOps.on(dst)) {
            DeviceOps.copyInto(dst, src.dtype() == dst.dtype() ? src : DeviceOps.copy(src, dst.dtype()));
        } else {
            Strided.copy(src.view(), dst.view(), src.shape());
        }
    }

    private static void checkCatShape(Tensor first, Tensor t, int d, int i) {
        int[] a = first.shape();
        int[] b = t.shape();
        boolean ok = a.length == b.length;
        for (int k = 0; ok && k < a.length; k++) {
            ok = k == d || a[k] == b[k];
        }
        if (!ok) {
            throw new IllegalArgumentException("cat: sizes of tensors must match except in dimension " + d
                    + "; tensor 0 has shape " + Shapes.str(a) + " but tensor " + i + " has shape " + Shapes.str(b));
        }
    }

    static Tensor stack(List<Tensor> tensors, int dim) {
        if (tensors == null || tensors.isEmpty()) {
            throw new IllegalArgumentException("stack expects a non-empty list of tensors");
        }
        int[] s0 = tensors.get(0).shape();
        int d = Shapes.normalizeDim(dim, s0.length + 1);
        List<Tensor> parts = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            if (!Arrays.equals(t.shape(), s0)) {
                throw new IllegalArgumentException("stack expects each tensor to be equal size, but got "
                        + Shapes.str(s0) + " at entry 0 and " + Shapes.str(t.shape()) + " at entry " + i);
            }
            parts.add(t.unsqueeze(d));
        }
        return cat(parts, d);
    }
}
