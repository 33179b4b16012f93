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
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The kernel table of device memory. The operations of {@link CompositeKernels} (arithmetic with broadcasting,
 * functions, reductions along dimensions, softmax, matrix products, casts, copies of strided views) record
 * autograd as on the host and run {@link DeviceOps}' kernels; this table adds the in-place arithmetic, fills,
 * copies and whole-tensor sums through the runtime's own operations. The {@link Kernels} defaults refuse the rest.
 * Strided views are read through a contiguous copy; in-place operations need a contiguous destination.
 *
 * <p>Each operation waits for its device work before it returns (with a deadline), so a device tensor behaves
 * as a CPU tensor to its caller: errors surface where the operation was called, and the result is ready.
 * In-place operations are not recorded: one on a tensor that requires grad is refused while grad mode is on.
 */
final class DeviceRuntimeKernels extends CompositeKernels {
    static final DeviceRuntimeKernels INSTANCE = new DeviceRuntimeKernels();

    /** What device tensors support, for refusals. */
    static final String SUPPORTED = "device tensors support add, sub, mul, div, neg and their in-place forms, "
            + "exp, log, sqrt, abs, relu, sigmoid, tanh, pow, clamp, eq/gt/lt, sum, mean, max/min, softmax, "
            + "logSoftmax, matmul, mm, bmm, cat, stack, indexSelect, gather, scatter, oneHot, set, filli, zeroi, "
            + "copyi, clone, contiguous, to(DType), views, item and toXxxArray, with autograd";

    /** How long one device operation may take before the caller gets a timeout, in minutes. */
    private static final long DEVICE_WAIT_MINUTES = 10;

    private DeviceRuntimeKernels() {
    }

    // ---- in place --------------------------------------------------------------------------------------------

    @Override
    public Tensor addi(Tensor self, Tensor other, double alpha) {
        if (alpha == 1.0) {
            return inplace(ElementwiseOp.ADD, self, other, "addi");
        }
        refuseGrad("addi", self, other);
        try (var ignored = Autograd.noGrad()) {
            return copyi(self, Ops.add(self, other, alpha));
        }
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

    /** {@code self = self op other} (other cast to self's dtype), in place. */
    private static Tensor inplace(ElementwiseOp op, Tensor self, Tensor other, String name) {
        refuseGrad(name, self, other);
        if (!(other.device().isCpu() && other.dim() == 0)) {
            sameDevice(name, self, other); // a host 0-d tensor is a scalar, as PyTorch takes it with CUDA tensors
        }
        checkInplaceType(op, self, name);
        int[] broadcast = Shapes.broadcast(self.shape(), other.shape());
        if (!Arrays.equals(broadcast, self.shape())) {
            throw new IllegalArgumentException(name + ": output with shape " + Shapes.str(self.shape())
                    + " doesn't match the broadcast shape " + Shapes.str(broadcast));
        }
        Tensor o = Placement.to(other, self.device());
        Tensor y = cast(o.numel() == 1 ? DeviceOps.contiguous(o) : DeviceOps.contiguous(o.expand(self.shape())),
                self.dtype());
        if (!self.isContiguous()) {
            return throughCopy(op, self, y);
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
        if (!self.isContiguous()) {
            return throughCopy(op, self, Tensor.scalar(v, Ops.computeType(self.dtype())));
        }
        DeviceBuffer s = buffer(self, name);
        await(runtime(self).elementwise(op, s, v, s), name, self);
        self.storage().bumpVersion();
        return self;
    }

    /** {@code self op y} computed into new memory and written back into a strided {@code self}. */
    private static Tensor throughCopy(ElementwiseOp op, Tensor self, Tensor y) {
        Tensor r = DeviceOps.binary(op.name().toLowerCase(Locale.ROOT), self, y, Ops.computeType(self.dtype()),
                self.dtype());
        DeviceOps.copyInto(self, r);
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
        if (!t.isContiguous()) {
            DeviceOps.copyInto(t, Placement.full(t.device(), t.dtype(), v, t.shape()));
            return t;
        }
        await(runtime(t).fill(buffer(t, "filli"), v), "filli", t);
        t.storage().bumpVersion();
        return t;
    }

    /** Writes one element in place: a fill of the element's view, after the host's checks of the index. */
    @Override
    public Tensor set(Tensor t, double value, int[] index) {
        AutogradMeta.checkInplace(t, "set");
        t.elementOffset(index);
        try (var ignored = Autograd.noGrad()) {
            Tensor element = t;
            for (int i : index) {
                element = element.select(0, i);
            }
            filli(element, value);
        }
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
        if (!Arrays.equals(Shapes.broadcast(dst.shape(), s.shape()), dst.shape())) {
            throw new IllegalArgumentException("copyi on " + dst.device() + " needs a source that broadcasts to "
                    + Shapes.str(dst.shape()) + ", got " + Shapes.str(src.shape()));
        }
        Tensor c = cast(DeviceOps.contiguous(Arrays.equals(dst.shape(), s.shape()) ? s : s.expand(dst.shape())),
                dst.dtype());
        if (!dst.isContiguous()) {
            DeviceOps.copyInto(dst, c);
            return dst;
        }
        await(runtime(dst).copy(buffer(c, "copyi"), 0, buffer(dst, "copyi"), 0, bytes(dst)), "copyi", dst);
        Reference.reachabilityFence(c);
        dst.storage().bumpVersion();
        return dst;
    }

    private static Tensor cast(Tensor t, DType to) {
        return t.dtype() == to ? t : DeviceOps.copy(t, to);
    }

    @Override
    public Tensor sum(Tensor t) {
        if (t.dtype().isFloatingPoint()) {
            return ReduceOps.sum(t, null, false);
        }
        // Integers and bools sum exactly in int64 with the runtime's own kernel; they have no gradient.
        Tensor out = emptyNear(t, t.dtype().isFloatingPoint() ? t.dtype() : DType.INT64, new int[0]);
        Tensor c = DeviceOps.contiguous(t);
        await(runtime(c).sum(buffer(c, "sum"), buffer(out, "sum")), "sum", t);
        return out;
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
    static Tensor emptyNear(Tensor like, DType dtype, int[] shape) {
        if (like.storage().isPooled()) {
            return CachingDeviceAllocator.get().allocate(like.device(), dtype, shape);
        }
        // Memory the user wrapped may live in its own context (OpenCL): results go next to it, unpooled.
        DeviceRuntime runtime = runtime(like);
        return onDevice(runtime, runtime.allocateNear(like.storage().deviceBuffer(), dtype, longs(shape)), dtype,
                shape);
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
        await(f, op, on.device());
    }

    /** Waits for device work {@code f} of {@code op} on {@code on}, with a deadline, and rethrows its failure. */
    static void await(CompletableFuture<Void> f, String op, Device on) {
        try {
            f.get(DEVICE_WAIT_MINUTES, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IllegalArgumentException iae) {
                throw new IllegalArgumentException(op + " on " + on + ": " + iae.getMessage(), iae);
            }
            throw new IllegalStateException(op + " on " + on + " failed: " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException(op + " on " + on + " did not finish within "
                    + DEVICE_WAIT_MINUTES + " minutes", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(op + " on " + on + " was interrupted", e);
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
