package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.ElementwiseOp;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The kernel table of device memory: the element-wise arithmetic, fills, copies, casts and whole-tensor sums that
 * device runtimes compute; the {@link Kernels} defaults refuse everything else. Device tensors here are
 * contiguous: all of their storage or a contiguous part of it (a narrow on the first dimension, a select, a
 * split); strided views of device memory are refused.
 *
 * <p>Each operation waits for its device work before it returns (with a deadline), so a device tensor behaves
 * as a CPU tensor to its caller: errors surface where the operation was called, and the result is ready.
 * Autograd does not record device operations: one whose input requires grad is refused.
 */
final class DeviceRuntimeKernels implements Kernels {
    static final DeviceRuntimeKernels INSTANCE = new DeviceRuntimeKernels();

    /** What device tensors support, for refusals. */
    static final String SUPPORTED = "device tensors support add, sub, mul, div, neg and their in-place forms, "
            + "filli, zeroi, copyi, clone, to(DType), sum(), mean(), reshape/view, contiguous narrow/select/split, "
            + "item and toXxxArray";

    /** How long one device operation may take before the caller gets a timeout, in minutes. */
    private static final long DEVICE_WAIT_MINUTES = 10;

    private DeviceRuntimeKernels() {
    }

    // ---- arithmetic -----------------------------------------------------------------------------------------

    @Override
    public Tensor add(Tensor a, Tensor b, double alpha) {
        return addScaled(a, b, alpha, "add");
    }

    @Override
    public Tensor sub(Tensor a, Tensor b) {
        return binary(ElementwiseOp.SUB, a, b, "sub");
    }

    @Override
    public Tensor mul(Tensor a, Tensor b) {
        return binary(ElementwiseOp.MUL, a, b, "mul");
    }

    @Override
    public Tensor div(Tensor a, Tensor b) {
        return binary(ElementwiseOp.DIV, a, b, "div");
    }

    @Override
    public Tensor add(Tensor a, double v) {
        return scalar(ElementwiseOp.ADD, a, v, "add");
    }

    @Override
    public Tensor mul(Tensor a, double v) {
        return scalar(ElementwiseOp.MUL, a, v, "mul");
    }

    @Override
    public Tensor div(Tensor a, double v) {
        return scalar(ElementwiseOp.DIV, a, v, "div");
    }

    @Override
    public Tensor addi(Tensor self, Tensor other, double alpha) {
        return alpha == 1.0 ? inplace(ElementwiseOp.ADD, self, other, "addi")
                : copyi(self, addScaled(self, other, alpha, "addi"));
    }

    @Override
    public Tensor subi(Tensor self, Tensor other) {
        return inplace(ElementwiseOp.SUB, self, other, "subi");
    }

    @Override
    public Tensor muli(Tensor self, Tensor other) {
        return inplace(ElementwiseOp.MUL, self, other, "muli");
    }

    @Override
    public Tensor divi(Tensor self, Tensor other) {
        return inplace(ElementwiseOp.DIV, self, other, "divi");
    }

    @Override
    public Tensor addi(Tensor self, double v) {
        return inplace(ElementwiseOp.ADD, self, v, "addi");
    }

    @Override
    public Tensor muli(Tensor self, double v) {
        return inplace(ElementwiseOp.MUL, self, v, "muli");
    }

    @Override
    public Tensor divi(Tensor self, double v) {
        return inplace(ElementwiseOp.DIV, self, v, "divi");
    }

    private static Tensor binary(ElementwiseOp op, Tensor a, Tensor b, String name) {
        refuseGrad(name, a, b);
        sameDevice(name, a, b);
        DType rt = op == ElementwiseOp.DIV ? Ops.floatResult(Ops.promote(a, b)) : Ops.promote(a, b);
        Tensor x = cast(a, rt);
        Tensor y = cast(b, rt);
        if (y.numel() != 1 && !Arrays.equals(x.shape(), y.shape())) {
            throw new IllegalArgumentException(name + " on " + a.device() + " needs operands of one shape or a "
                    + "one-element operand, got " + Shapes.str(a.shape()) + " and " + Shapes.str(b.shape())
                    + " (broadcasting other shapes is host-only)");
        }
        Tensor out = emptyNear(x, rt, x.shape());
        await(runtime(x).elementwise(op, buffer(x, name), buffer(y, name), buffer(out, name)), name, x);
        // y may be a temporary of the caller's: its memory must not be released while the device reads it.
        Reference.reachabilityFence(y);
        return out;
    }

    private static Tensor scalar(ElementwiseOp op, Tensor a, double v, String name) {
        refuseGrad(name, a);
        DType rt = op == ElementwiseOp.DIV ? Ops.floatResult(a.dtype()) : Ops.scalarResult(a.dtype(), v);
        Tensor x = cast(a, rt);
        Tensor out = emptyNear(x, rt, a.shape());
        await(runtime(x).elementwise(op, buffer(x, name), v, buffer(out, name)), name, x);
        return out;
    }

    /**
     * {@code a + alpha * b}. Half-precision tensors compute in float32 and round once, as the host does, rather
     * than rounding {@code alpha * b} first.
     */
    private static Tensor addScaled(Tensor a, Tensor b, double alpha, String name) {
        if (alpha == 1.0) {
            return binary(ElementwiseOp.ADD, a, b, name);
        }
        DType rt = Ops.promote(a, b);
        if (Ops.computeType(rt) != rt) {
            return cast(binary(ElementwiseOp.ADD, cast(a, DType.FLOAT32), scalar(ElementwiseOp.MUL,
                    cast(b, DType.FLOAT32), alpha, name), name), rt);
        }
        return binary(ElementwiseOp.ADD, a, scalar(ElementwiseOp.MUL, b, alpha, name), name);
    }

    /** {@code self = self op other} (other cast to self's dtype), in place. */
    private static Tensor inplace(ElementwiseOp op, Tensor self, Tensor other, String name) {
        refuseGrad(name, self, other);
        sameDevice(name, self, other);
        checkInplaceType(op, self, name);
        Tensor y = cast(other, self.dtype());
        if (y.numel() != 1 && !Arrays.equals(self.shape(), y.shape())) {
            throw new IllegalArgumentException(name + " on " + self.device() + " needs an operand of this shape or a "
                    + "one-element one, got " + Shapes.str(other.shape()) + " for " + Shapes.str(self.shape()));
        }
        DeviceBuffer s = buffer(self, name);
        await(runtime(self).elementwise(op, s, buffer(y, name), s), name, self);
        Reference.reachabilityFence(y);
        self.storage().bumpVersion();
        return self;
    }

    private static Tensor inplace(ElementwiseOp op, Tensor self, double v, String name) {
        refuseGrad(name, self);
        checkInplaceType(op, self, name);
        DeviceBuffer s = buffer(self, name);
        await(runtime(self).elementwise(op, s, v, s), name, self);
        self.storage().bumpVersion();
        return self;
    }

    private static void checkInplaceType(ElementwiseOp op, Tensor self, String name) {
        if (op == ElementwiseOp.DIV && !self.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException(name + ": result type float32 can't be cast to the desired output type "
                    + self.dtype() + "; use div() for true division");
        }
    }

    // ---- fills, copies, casts, sums -------------------------------------------------------------------------

    @Override
    public Tensor filli(Tensor t, double v) {
        refuseGrad("filli", t);
        await(runtime(t).fill(buffer(t, "filli"), v), "filli", t);
        t.storage().bumpVersion();
        return t;
    }

    /** Copies {@code src} (of this shape, or one element) into {@code dst}, converting its dtype. */
    @Override
    public Tensor copyi(Tensor dst, Tensor src) {
        refuseGrad("copyi", dst, src);
        Tensor s = Placement.to(src, dst.device());
        if (s.numel() == 1 && dst.numel() != 1) {
            return filli(dst, s.to(Device.CPU).item());
        }
        if (!Arrays.equals(dst.shape(), s.shape())) {
            throw new IllegalArgumentException("copyi on " + dst.device() + " needs a source of shape "
                    + Shapes.str(dst.shape()) + " or one element, got " + Shapes.str(src.shape()));
        }
        Tensor c = cast(s, dst.dtype());
        await(runtime(dst).copy(buffer(c, "copyi"), 0, buffer(dst, "copyi"), 0, bytes(dst)), "copyi", dst);
        Reference.reachabilityFence(c);
        dst.storage().bumpVersion();
        return dst;
    }

    @Override
    public Tensor clone(Tensor t) {
        refuseGrad("clone", t);
        Tensor out = emptyNear(t, t.dtype(), t.shape());
        await(runtime(t).copy(buffer(t, "clone"), 0, buffer(out, "clone"), 0, bytes(t)), "clone", t);
        return out;
    }

    @Override
    public Tensor contiguous(Tensor t) {
        if (!t.isContiguous()) {
            throw Dispatch.missing("contiguous", t);
        }
        return t;
    }

    @Override
    public Tensor to(Tensor t, DType dtype) {
        return cast(t, Objects.requireNonNull(dtype, "dtype"));
    }

    private static Tensor cast(Tensor t, DType to) {
        if (t.dtype() == to) {
            return t;
        }
        refuseGrad("to(" + to + ")", t);
        Tensor out = emptyNear(t, to, t.shape());
        await(runtime(t).cast(buffer(t, "to"), buffer(out, "to")), "to(" + to + ")", t);
        return out;
    }

    @Override
    public Tensor sum(Tensor t) {
        refuseGrad("sum", t);
        Tensor out = emptyNear(t, t.dtype().isFloatingPoint() ? t.dtype() : DType.INT64, new int[0]);
        await(runtime(t).sum(buffer(t, "sum"), buffer(out, "sum")), "sum", t);
        return out;
    }

    @Override
    public Tensor mean(Tensor t) {
        if (!t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("mean(): could not infer output dtype; input dtype must be floating"
                    + " point, got " + t.dtype() + " (convert with to(DType.FLOAT32))");
        }
        return scalar(ElementwiseOp.DIV, sum(t), t.numel(), "mean");
    }

    /** Reading elements on the host goes through a host copy. */
    @Override
    public Tensor readable(Tensor t) {
        return Placement.to(t, Device.CPU);
    }

    // ---- helpers shared with Placement ----------------------------------------------------------------------

    /** A device tensor over {@code buffer}, which this storage owns. */
    static Tensor onDevice(DeviceRuntime runtime, DeviceBuffer buffer, DType dtype, int[] shape) {
        int[] s = shape.clone();
        return new Tensor(Storage.onDevice(buffer, runtime, true), dtype, s, Shapes.contiguousStrides(s), 0, null);
    }

    /** A result of an operation on {@code like}: zeros of {@code dtype} where {@code like}'s memory lives. */
    private static Tensor emptyNear(Tensor like, DType dtype, int[] shape) {
        DeviceRuntime runtime = runtime(like);
        return onDevice(runtime, runtime.allocateNear(buffer(like, "allocate"), dtype, longs(shape)), dtype, shape);
    }

    static DeviceRuntime runtime(Tensor t) {
        return DeviceRuntimeProvider.of(t.device());
    }

    /** The device buffer of a dense device tensor. */
    static DeviceBuffer buffer(Tensor t, String op) {
        DeviceBuffer b = t.storage().deviceBuffer();
        if (b == null) {
            throw new IllegalArgumentException(op + ": a tensor on the host met a device operation (tensors on "
                    + "different devices: move one with to(Device))");
        }
        long bytes = (long) t.numel() * t.dtype().byteSize();
        if (!t.isContiguous()) {
            throw new UnsupportedOperationException(op + " on " + t.device() + " needs a contiguous tensor; this one is"
                    + " a strided view of shape " + Shapes.str(t.shape()) + " (strides " + Shapes.str(t.strides())
                    + "): strided views of device memory are not supported");
        }
        if (t.storageOffset() == 0 && bytes == b.byteSize()) {
            return b; // a reshape keeps every element in place, and the kernels only count elements
        }
        // A contiguous part of the storage (narrow on the first dimension, select, split): a view of the buffer.
        return runtime(t).view(b, t.storageOffset() * t.dtype().byteSize(), t.dtype(), longs(t.shape()));
    }

    private static long bytes(Tensor t) {
        return (long) t.numel() * t.dtype().byteSize();
    }

    private static void sameDevice(String op, Tensor a, Tensor b) {
        if (!a.device().equals(b.device())) {
            throw new IllegalArgumentException(op + ": expected all tensors on one device, got " + a.device() + " and "
                    + b.device() + " (move one with to(Device))");
        }
    }

    static void refuseGrad(String op, Tensor... ts) {
        if (!Autograd.isGradEnabled()) {
            return;
        }
        for (Tensor t : ts) {
            if (t.requiresGrad()) {
                throw new UnsupportedOperationException(op + ": autograd does not record operations on device "
                        + "tensors yet, and an input requires grad; run it inside Autograd.noGrad() or on the host");
            }
        }
    }

    static void await(CompletableFuture<Void> f, String op, Tensor on) {
        try {
            f.get(DEVICE_WAIT_MINUTES, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IllegalArgumentException iae) {
                throw new IllegalArgumentException(op + " on " + on.device() + ": " + iae.getMessage(), iae);
            }
            throw new IllegalStateException(op + " on " + on.device() + " failed: " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException(op + " on " + on.device() + " did not finish within "
                    + DEVICE_WAIT_MINUTES + " minutes", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(op + " on " + on.device() + " was interrupted", e);
        }
    }

    static long[] longs(int[] shape) {
        long[] out = new long[shape.length];
        for (int i = 0; i < shape.length; i++) {
            out[i] = shape[i];
        }
        return out;
    }
}
