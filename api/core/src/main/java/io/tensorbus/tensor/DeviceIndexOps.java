package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import java.util.Arrays;

/**
 * The device side of {@link IndexOps}. The host reads the indices, checks them and computes the element offset
 * each one addresses exactly as for host tensors; the device then moves elements by those offsets: {@code take}
 * gathers, {@code put} writes to distinct offsets (of duplicates, the last index wins, as on the host), and
 * {@code addAt} sums the elements that share an offset in one work item, so results do not depend on scheduling
 * and no atomics are needed.
 */
final class DeviceIndexOps {
    private DeviceIndexOps() {
    }

    /** {@code out[i] = src[offs[i]]}, {@code out} of {@code shape}; {@code src} is a contiguous device tensor. */
    static Tensor take(String op, Tensor src, long[] offs, int[] shape) {
        Tensor out = DeviceRuntimeKernels.emptyNear(src, src.dtype(), shape);
        if (offs.length > 0) {
            DeviceOps.launch(op, DeviceTensorKernels.copies(),
                    DeviceTensorKernels.takeName(src.dtype().byteSize()), offs.length, 0, src, upload(offs, src), out,
                    (long) offs.length);
        }
        return out;
    }

    /**
     * {@code dst[offs[i]] = values[i]} (or {@code values[0]} for every {@code i} when it holds one element) in
     * place, the last {@code i} winning among equal offsets; {@code dst} is a contiguous device tensor.
     */
    static void put(String op, Tensor dst, long[] offs, Tensor values) {
        Groups g = Groups.of(offs);
        if (g.targets.length == 0) {
            return;
        }
        boolean one = values.numel() == 1;
        long[] from = new long[g.targets.length];
        for (int k = 0; k < from.length; k++) {
            from[k] = one ? 0 : g.order[(int) g.starts[k + 1] - 1];
        }
        Tensor v = DeviceOps.contiguous(values.dtype() == dst.dtype() ? values : values.to(dst.dtype()));
        DeviceOps.launch(op, DeviceTensorKernels.copies(), DeviceTensorKernels.putName(dst.dtype().byteSize()),
                from.length, 0, dst, upload(g.targets, dst), v, upload(from, dst), (long) from.length);
        dst.storage().bumpVersion();
    }

    /**
     * {@code dst[offs[i]] += src[i]} in place, duplicates accumulating in index order and each addition rounded to
     * the element type, as the host does; {@code dst} is contiguous and floating (half types add in float32).
     */
    static void addAt(String op, Tensor dst, long[] offs, Tensor src) {
        Groups g = Groups.of(offs);
        if (g.targets.length == 0) {
            return;
        }
        if (dst.dtype() != DType.FLOAT32 && dst.dtype() != DType.FLOAT64) {
            Tensor wide = DeviceOps.copy(dst, DType.FLOAT32);
            addAt(op, wide, offs, src);
            DeviceOps.copyInto(dst, DeviceOps.copy(wide, dst.dtype()));
            return;
        }
        Tensor s = DeviceOps.contiguous(src.dtype() == dst.dtype() ? src : src.to(dst.dtype()));
        DeviceOps.launch(op, DeviceTensorKernels.program(dst.dtype()), DeviceTensorKernels.ADD_AT,
                g.targets.length, 0, dst, s, upload(g.targets, dst), upload(g.starts, dst), upload(g.order, dst),
                (long) g.targets.length);
        dst.storage().bumpVersion();
    }

    /** {@code oneHot} of device indices already checked to lie in {@code [0, classes)}: one int64 compare. */
    static Tensor oneHot(Tensor indices, int classes) {
        Tensor classIds = Tensor.arange(classes).to(indices.device());
        return classIds.eq(indices.unsqueeze(indices.dim())).to(DType.INT64);
    }

    private static Tensor upload(long[] values, Tensor near) {
        return Tensor.of(values, values.length).to(near.device());
    }

    /**
     * The distinct offsets of an index walk ({@code targets}, ascending) and, for each, the positions that address
     * it ({@code order[starts[k]..starts[k+1])}, in index order).
     */
    private record Groups(long[] targets, long[] starts, long[] order) {
        static Groups of(long[] offs) {
            int n = offs.length;
            long[] packed = new long[n];
            for (int i = 0; i < n; i++) {
                packed[i] = offs[i] * n + i; // offsets and positions are below 2^31: no overflow
            }
            Arrays.sort(packed);
            long[] order = new long[n];
            long[] targets = new long[n];
            long[] starts = new long[n + 1];
            int groups = 0;
            for (int i = 0; i < n; i++) {
                long off = packed[i] / n;
                order[i] = packed[i] % n;
                if (groups == 0 || targets[groups - 1] != off) {
                    targets[groups] = off;
                    starts[groups++] = i;
                }
            }
            starts[groups] = n;
            return new Groups(Arrays.copyOf(targets, groups), Arrays.copyOf(starts, groups + 1), order);
        }
    }
}
