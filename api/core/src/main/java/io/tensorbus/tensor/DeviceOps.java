package io.tensorbus.tensor;

import static io.tensorbus.tensor.DeviceRuntimeKernels.await;
import static io.tensorbus.tensor.DeviceRuntimeKernels.buffer;
import static io.tensorbus.tensor.DeviceRuntimeKernels.emptyNear;
import static io.tensorbus.tensor.DeviceRuntimeKernels.runtime;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.DeviceTensorKernels;
import io.tensorbus.internal.tensor.Elementwise;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.ElementwiseOp;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import java.lang.ref.Reference;
import java.util.Arrays;

/**
 * The device side of the raw (unrecorded) kernels that {@link Ops}, {@link ViewOps}, {@link LinalgOps} and
 * {@link ReduceOps} run: as ATen's autograd layer re-dispatches to a CUDA kernel, those classes record autograd once
 * for host and device tensors alike and call here when an operand lives on a device. Each method waits for its
 * device work (with a deadline), so a result is ready when it returns, and refuses what the device kernels do not
 * compute, naming the operation and the device.
 */
final class DeviceOps {
    private DeviceOps() {
    }

    /** Whether {@code t}'s elements live in a device runtime's memory. */
    static boolean on(Tensor t) {
        return t.storage().deviceBuffer() != null;
    }

    /**
     * Runs a kernel with {@link Tensor} arguments standing for their contiguous device memory, and waits for it.
     */
    static void launch(String op, KernelSource program, String kernel, long items, int groupSize, Object... args) {
        Tensor first = null;
        Object[] spread = args.clone();
        for (int i = 0; i < spread.length; i++) {
            if (spread[i] instanceof Tensor t) {
                first = first == null ? t : first;
                spread[i] = buffer(t, op);
            }
        }
        if (first == null) {
            throw new IllegalArgumentException(op + ": a device kernel needs a tensor argument to run on");
        }
        await(runtime(first).launch(program, kernel, items, groupSize, spread), op, first);
        Reference.reachabilityFence(args);
    }

    // ---- layout ----------------------------------------------------------------------------------------------

    /** {@code t} itself when contiguous, else a contiguous copy made by the strided-copy kernel. */
    static Tensor contiguous(Tensor t) {
        if (t.isContiguous()) {
            return t;
        }
        Tensor out = emptyNear(t, t.dtype(), t.shape());
        stridedCopy(t, out, "contiguous");
        return out;
    }

    /**
     * Writes {@code src} (of {@code dst}'s shape and dtype, on its device) into {@code dst}, which may be any
     * view: the in-place operations' way into strided device memory.
     */
    static void copyInto(Tensor dst, Tensor src) {
        stridedCopy(src, dst, "copyi");
    }

    /**
     * Copies every element of {@code src} to the same index of {@code dst}, both laid out as their strides say.
     * Layouts that walk more dimensions than the kernel does are copied one slice of their first dimension at a
     * time.
     */
    private static void stridedCopy(Tensor src, Tensor dst, String op) {
        int[][] dims = merged(src.shape(), src.strides(), dst.strides());
        int rank = dims[0].length;
        int max = DeviceTensorKernels.MAX_COPY_DIMS;
        if (rank > max) {
            int first = firstWalked(src.shape());
            try (var ignored = Autograd.noGrad()) {
                for (int i = 0; i < src.size(first); i++) {
                    stridedCopy(src.select(first, i), dst.select(first, i), op);
                }
            }
            return;
        }
        Object[] args = new Object[5 + 3 * max];
        args[0] = storageView(src);
        args[1] = storageView(dst);
        args[2] = (long) src.numel();
        args[3] = rank;
        for (int d = 0; d < max; d++) {
            args[4 + d] = d < rank ? (long) dims[0][d] : 1L;
            args[4 + max + d] = d < rank ? (long) dims[1][d] : 0L;
            args[4 + 2 * max + d] = d < rank ? (long) dims[2][d] : 0L;
        }
        await(runtime(src).launch(DeviceTensorKernels.copies(), DeviceTensorKernels.copyName(src.dtype().byteSize()),
                src.numel(), 0, Arrays.copyOf(args, 4 + 3 * max)), op, src);
        dst.storage().bumpVersion();
    }

    /** The first dimension of {@code shape} longer than 1. */
    private static int firstWalked(int[] shape) {
        int d = 0;
        while (shape[d] == 1) {
            d++;
        }
        return d;
    }

    /** The storage of {@code t} from its first element on, as a buffer the kernels index with strides. */
    private static DeviceBuffer storageView(Tensor t) {
        DeviceBuffer whole = t.storage().deviceBuffer();
        long offset = (long) t.storageOffset() * t.dtype().byteSize();
        long elements = whole.byteSize() / t.dtype().byteSize() - t.storageOffset();
        return runtime(t).view(whole, offset, t.dtype(), elements);
    }

    /**
     * Shape and two stride sets with size-1 dimensions dropped and neighbours merged where both layouts run them
     * one after the other.
     */
    private static int[][] merged(int[] shape, int[] a, int[] b) {
        int[] s = new int[shape.length];
        int[] sa = new int[shape.length];
        int[] sb = new int[shape.length];
        int r = 0;
        for (int d = 0; d < shape.length; d++) {
            if (shape[d] == 1) {
                continue;
            }
            if (r > 0 && sa[r - 1] == (long) a[d] * shape[d] && sb[r - 1] == (long) b[d] * shape[d]) {
                s[r - 1] *= shape[d];
                sa[r - 1] = a[d];
                sb[r - 1] = b[d];
            } else {
                s[r] = shape[d];
                sa[r] = a[d];
                sb[r] = b[d];
                r++;
            }
        }
        return new int[][] {Arrays.copyOf(s, r), Arrays.copyOf(sa, r), Arrays.copyOf(sb, r)};
    }

    /** A new contiguous tensor with {@code t}'s elements converted to {@code dtype}. */
    static Tensor copy(Tensor t, DType dtype) {
        Tensor c = contiguous(t);
        Tensor out = emptyNear(c, dtype, t.shape());
        if (c.dtype() == dtype) {
            await(runtime(c).copy(buffer(c, "copy"), 0, buffer(out, "copy"), 0, out.numel() * (long) dtype.byteSize()),
                    "copy", c);
        } else {
            await(runtime(c).cast(buffer(c, "to"), buffer(out, "to")), "to(" + dtype + ")", c);
        }
        Reference.reachabilityFence(c);
        return out;
    }

    /** {@code t} contiguous and in {@code dtype}, converted only where needed. */
    private static Tensor dense(Tensor t, DType dtype) {
        return t.dtype() == dtype ? contiguous(t) : copy(t, dtype);
    }

    // ---- element-wise ----------------------------------------------------------------------------------------

    /**
     * {@code op(a, b)} computed in {@code ct} and returned as {@code outType}, broadcasting; one operand may be a
     * host scalar (one element), which the kernel takes by value.
     */
    static Tensor binary(String op, Tensor a, Tensor b, DType ct, DType outType) {
        Tensor like = on(a) ? a : b;
        int[] shape = Shapes.broadcast(a.shape(), b.shape());
        Tensor x = deviceOperand(a, like, op);
        Tensor y = deviceOperand(b, like, op);
        ElementwiseOp arithmetic = arithmetic(op);
        if (arithmetic != null && !on(y) && Arrays.equals(x.shape(), shape)) {
            Tensor dx = dense(x, ct);
            Tensor out = emptyNear(like, ct, shape);
            await(runtime(like).elementwise(arithmetic, buffer(dx, op), y.to(DType.FLOAT64).item(),
                    buffer(out, op)), op, like);
            Reference.reachabilityFence(dx);
            return out.dtype() == outType ? out : copy(out, outType);
        }
        x = Placement.to(x, like.device());
        y = Placement.to(y, like.device());
        // x is materialised at the result's shape; y may stay one element, which the kernels read with stride 0.
        Tensor dx = dense(x.expand(shape), ct);
        Tensor dy = dense(y.numel() == 1 ? y : y.expand(shape), ct);
        Tensor out = launchBinary(op, arithmetic, dx, dy, ct, shape);
        Reference.reachabilityFence(dx);
        Reference.reachabilityFence(dy);
        return out.dtype() == outType ? out : copy(out, outType);
    }

    private static Tensor launchBinary(String op, ElementwiseOp arithmetic, Tensor x, Tensor y, DType ct,
            int[] shape) {
        long n = Shapes.numel(shape);
        long bs = y.numel() == 1 ? 0L : 1L;
        if (arithmetic != null) {
            Tensor out = emptyNear(x, ct, shape);
            await(runtime(x).elementwise(arithmetic, buffer(x, op), buffer(y, op), buffer(out, op)), op, x);
            return out;
        }
        int compare = compareCode(op);
        if (compare >= 0) {
            Tensor out = emptyNear(x, DType.BOOL, shape);
            String kernel = ct == DType.INT64 ? DeviceTensorKernels.COMPARE_INT64 : DeviceTensorKernels.COMPARE;
            await(runtime(x).launch(DeviceTensorKernels.program(ct == DType.INT64 ? DType.FLOAT64 : ct), kernel, n, 0,
                    buffer(x, op), buffer(y, op), buffer(out, op), n, bs, compare), op, x);
            return out;
        }
        checkReal(op, x, ct);
        Tensor out = emptyNear(x, ct, shape);
        await(runtime(x).launch(DeviceTensorKernels.program(ct), DeviceTensorKernels.BINARY, n, 0, buffer(x, op),
                buffer(y, op), buffer(out, op), n, bs, binaryCode(op, x)), op, x);
        return out;
    }

    /**
     * {@code op(a)} with result type {@code rt}, computed in float32 (float64 for float64) as the host's functions
     * are; {@code p0} and {@code p1} are the parameters of {@code pow} and {@code clamp}.
     */
    static Tensor unary(String op, Tensor a, DType rt, double p0, double p1) {
        DType ct = Ops.computeType(rt);
        checkReal(op, a, ct);
        Tensor x = dense(a, ct);
        Tensor out = emptyNear(x, ct, a.shape());
        long n = a.numel();
        await(runtime(x).launch(DeviceTensorKernels.program(ct), DeviceTensorKernels.UNARY, n, 0, buffer(x, op),
                buffer(out, op), n, unaryCode(op, a), p0, p1), op, a);
        Reference.reachabilityFence(x);
        return ct == rt ? out : copy(out, rt);
    }

    private static Tensor deviceOperand(Tensor t, Tensor like, String op) {
        if (on(t) && !t.device().equals(like.device())) {
            throw new IllegalArgumentException(op + ": expected all tensors on one device, got " + like.device()
                    + " and " + t.device() + " (move one with to(Device))");
        }
        if (!on(t) && t.numel() != 1) {
            throw new IllegalArgumentException(op + ": expected all tensors on one device, got " + like.device()
                    + " and cpu (a host tensor of shape " + Shapes.str(t.shape()) + "; move it with to(Device))");
        }
        return t;
    }

    private static ElementwiseOp arithmetic(String op) {
        return switch (op) {
            case "add" -> ElementwiseOp.ADD;
            case "sub" -> ElementwiseOp.SUB;
            case "mul" -> ElementwiseOp.MUL;
            case "div" -> ElementwiseOp.DIV;
            default -> null;
        };
    }

    private static int compareCode(String op) {
        return switch (op) {
            case "eq" -> DeviceTensorKernels.COMPARE_EQ;
            case "gt" -> DeviceTensorKernels.COMPARE_GT;
            case "lt" -> DeviceTensorKernels.COMPARE_LT;
            default -> -1;
        };
    }

    private static int binaryCode(String op, Tensor on) {
        return switch (op) {
            case "pow" -> DeviceTensorKernels.BINARY_POW;
            case "powGrad" -> DeviceTensorKernels.BINARY_POW_GRAD;
            case "xlog" -> DeviceTensorKernels.BINARY_XLOG;
            case "isMax" -> DeviceTensorKernels.BINARY_IS_MAX;
            default -> {
                if (op.equals(Elementwise.RELU_GRAD)) {
                    yield DeviceTensorKernels.BINARY_RELU_GRAD;
                }
                throw unsupported(op, on);
            }
        };
    }

    private static int unaryCode(String op, Tensor on) {
        return switch (op) {
            case "relu" -> DeviceTensorKernels.UNARY_RELU;
            case "exp" -> DeviceTensorKernels.UNARY_EXP;
            case "log" -> DeviceTensorKernels.UNARY_LOG;
            case "sqrt" -> DeviceTensorKernels.UNARY_SQRT;
            case "abs" -> DeviceTensorKernels.UNARY_ABS;
            case "sigmoid" -> DeviceTensorKernels.UNARY_SIGMOID;
            case "tanh" -> DeviceTensorKernels.UNARY_TANH;
            case "sign" -> DeviceTensorKernels.UNARY_SIGN;
            case "pow" -> DeviceTensorKernels.UNARY_POW;
            case "clamp" -> DeviceTensorKernels.UNARY_CLAMP;
            case "clampMask" -> DeviceTensorKernels.UNARY_CLAMP_MASK;
            default -> throw unsupported(op, on);
        };
    }

    private static void checkReal(String op, Tensor on, DType ct) {
        if (ct != DType.FLOAT32 && ct != DType.FLOAT64) {
            throw new UnsupportedOperationException(op + " on " + on.device() + " computes float32 and float64 "
                    + "tensors, not " + ct + "; convert with to(DType.FLOAT32) or move the tensor to the host");
        }
    }

    static UnsupportedOperationException unsupported(String op, Tensor on) {
        return new UnsupportedOperationException("Tensor." + op + " is not supported for tensors on " + on.device()
                + ": " + DeviceRuntimeKernels.SUPPORTED + "; move the tensor to the host with cpu() first");
    }

    // ---- reductions along rows -------------------------------------------------------------------------------

    /**
     * The sums of the rows of a contiguous {@code [outer, inner]} tensor of float32, float64 or int64 (exact,
     * wrapping as Java's {@code long}), as {@code [outer]}.
     */
    static Tensor sumRows(Tensor rows) {
        boolean int64 = rows.dtype() == DType.INT64;
        if (!int64) {
            checkReal("sum", rows, rows.dtype());
        }
        int outer = rows.size(0);
        Tensor out = emptyNear(rows, rows.dtype(), new int[] {outer});
        if (outer == 0 || rows.size(1) == 0) {
            return out; // zero-filled: the sum of nothing
        }
        long items = (long) outer * DeviceTensorKernels.ROW_GROUP;
        await(runtime(rows).launch(DeviceTensorKernels.program(int64 ? DType.FLOAT64 : rows.dtype()),
                int64 ? DeviceTensorKernels.SUM_ROWS_INT64 : DeviceTensorKernels.SUM_ROWS, items,
                DeviceTensorKernels.ROW_GROUP, buffer(rows, "sum"), buffer(out, "sum"), (long) rows.size(1)), "sum",
                rows);
        return out;
    }

    /** Softmax or log-softmax along {@code dim} of a float32 or float64 tensor. */
    static Tensor softmax(Tensor t, int dim, boolean log) {
        Tensor rows = rowsAlong(t, dim);
        Tensor out = emptyNear(rows, rows.dtype(), rows.shape());
        long r = rows.numel() / Math.max(1, rows.size(-1));
        await(runtime(rows).launch(DeviceTensorKernels.program(rows.dtype()), DeviceTensorKernels.SOFTMAX_ROWS, r, 0,
                buffer(rows, "softmax"), buffer(out, "softmax"), r, (long) rows.size(-1), log ? 1 : 0), "softmax", t);
        return back(out, dim);
    }

    /** The gradient of {@link #softmax} from the gradient {@code g} of its output {@code y}. */
    static Tensor softmaxBackward(Tensor g, Tensor y, int dim, boolean log) {
        Tensor gr = rowsAlong(g.to(y.dtype()), dim);
        Tensor yr = rowsAlong(y, dim);
        Tensor out = emptyNear(yr, yr.dtype(), yr.shape());
        long r = yr.numel() / Math.max(1, yr.size(-1));
        await(runtime(yr).launch(DeviceTensorKernels.program(yr.dtype()), DeviceTensorKernels.SOFTMAX_BACKWARD_ROWS,
                r, 0, buffer(gr, "softmax"), buffer(yr, "softmax"), buffer(out, "softmax"), r, (long) yr.size(-1),
                log ? 1 : 0), "softmax backward", y);
        return back(out, dim);
    }

    /**
     * Values and int64 indices of the largest (smallest) element of each row of a contiguous {@code [outer, inner]}
     * float32 or float64 tensor: the first NaN, else the first of equals.
     */
    static Tensor[] maxRows(Tensor rows, boolean max) {
        String op = max ? "max" : "min";
        checkReal(op, rows, rows.dtype());
        int outer = rows.size(0);
        Tensor values = emptyNear(rows, rows.dtype(), new int[] {outer});
        Tensor indices = emptyNear(rows, DType.INT64, new int[] {outer});
        await(runtime(rows).launch(DeviceTensorKernels.program(rows.dtype()), DeviceTensorKernels.MAX_ROWS, outer, 0,
                buffer(rows, op), buffer(values, op), buffer(indices, op), (long) outer, (long) rows.size(1),
                max ? 1 : 0), op, rows);
        return new Tensor[] {values, indices};
    }

    /** {@code t} with {@code dim} moved last, contiguous. */
    private static Tensor rowsAlong(Tensor t, int dim) {
        try (var ignored = Autograd.noGrad()) {
            return contiguous(dim == t.dim() - 1 || t.dim() == 0 ? t : t.transpose(dim, -1));
        }
    }

    /** The rows of {@link #rowsAlong} put back in place, contiguous. */
    private static Tensor back(Tensor rows, int dim) {
        try (var ignored = Autograd.noGrad()) {
            return dim == rows.dim() - 1 || rows.dim() == 0 ? rows : contiguous(rows.transpose(dim, -1));
        }
    }

    // ---- matrix products -------------------------------------------------------------------------------------

    /** The product of two float32 or float64 matrices, through the runtime's GEMM. */
    static Tensor mm(Tensor a, Tensor b) {
        return bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0);
    }

    /** The batched product of {@code [b, n, k]} and {@code [b, k, m]}, through the runtime's GEMM. */
    static Tensor bmm(Tensor a, Tensor b) {
        if (!on(a) || !on(b) || !a.device().equals(b.device())) {
            throw new IllegalArgumentException("mm: expected all tensors on one device, got " + a.device() + " and "
                    + b.device() + " (move one with to(Device))");
        }
        checkReal("mm", a, a.dtype());
        int batch = a.size(0);
        int m = a.size(1);
        int k = a.size(2);
        int n = b.size(2);
        Tensor x = gemmReady(a);
        Tensor y = gemmReady(b);
        Tensor out = emptyNear(a, a.dtype(), new int[] {batch, m, n});
        GemmOperand c = new GemmOperand(buffer(out, "mm"), 0, Math.max(1, n), (long) m * n, false);
        await(runtime(a).gemm(batch, m, n, k, 1.0, operand(x), operand(y), 0.0, c), "mm", a);
        Reference.reachabilityFence(x);
        Reference.reachabilityFence(y);
        return out;
    }

    /** {@code t} when BLAS can read it in place (rows or columns of unit stride), else a contiguous copy. */
    private static Tensor gemmReady(Tensor t) {
        return layout(t) != null ? t : contiguous(t);
    }

    private static GemmOperand operand(Tensor t) {
        long[] l = layout(t);
        DeviceBuffer whole = t.storage().deviceBuffer();
        return new GemmOperand(whole, t.storageOffset(), l[0], l[1], l[2] == 1);
    }

    /** {@code {ld, batchStride, transposed}} of a 3-d view BLAS reads in place, or null. */
    private static long[] layout(Tensor t) {
        int rows = t.size(1);
        int cols = t.size(2);
        int[] st = t.strides();
        long batchStride = t.size(0) <= 1 ? 0 : st[0];
        if ((cols <= 1 || st[2] == 1) && (rows <= 1 || st[1] >= cols)) {
            return new long[] {rows <= 1 ? Math.max(1, cols) : st[1], batchStride, 0};
        }
        if ((rows <= 1 || st[1] == 1) && (cols <= 1 || st[2] >= rows)) {
            return new long[] {cols <= 1 ? Math.max(1, rows) : st[2], batchStride, 1};
        }
        return null;
    }
}
