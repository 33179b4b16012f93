package io.tensorbus.spi.support;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.ElementwiseOp;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The part of a {@link DeviceRuntime} that is the same for every device type whose arithmetic is the
 * {@link DeviceKernels}: the checks, the kernel chosen for each operation and the arguments it takes. A runtime
 * says how its buffers are addressed ({@link #operand}), how a kernel is launched, and what it does with memory
 * (allocation, copies, fills, reductions of operands from elsewhere); failures reach the caller through the
 * returned future.
 *
 * @param <B> the runtime's buffer type
 */
public abstract class KernelDeviceRuntime<B extends DeviceBuffer> implements DeviceRuntime {
    private final Class<B> bufferType;
    private final String memoryName;

    /**
     * @param bufferType the class of the buffers this runtime allocates and wraps
     * @param memoryName the memory's name in messages: {@code OpenCL}, {@code CUDA}
     */
    protected KernelDeviceRuntime(Class<B> bufferType, String memoryName) {
        this.bufferType = bufferType;
        this.memoryName = memoryName;
    }

    // ---- what a runtime provides ---------------------------------------------------------------------------

    /**
     * The kernel arguments that address {@code b} from byte {@code byteOffset}: a memory handle or address, then
     * an element offset (two values).
     */
    protected abstract Object[] operand(B b, long byteOffset);

    /** Launches {@code kernel} over {@code n} elements on {@code on}'s device queue; completes when it ran. */
    protected abstract CompletableFuture<Void> launch(B on, String kernel, long n, Object... args);

    /** Launches {@code kernel} as one work-group (block) of {@code threads}. */
    protected abstract CompletableFuture<Void> launchOneGroup(B on, String kernel, int threads, Object... args);

    /**
     * Launches kernel {@code kernel} of {@code program} (compiled on first use for {@code on}'s device) over
     * {@code items} work items in groups of {@code groupSize} (0: the runtime's choice); the arguments are already
     * checked and each buffer spread into its {@link #operand}.
     */
    protected abstract CompletableFuture<Void> launchProgram(B on, KernelSource program, String kernel, long items,
                                                             int groupSize, Object[] args);

    /**
     * Checks that one kernel can read and write both buffers (one OpenCL context, one CUDA device).
     *
     * @throws IllegalArgumentException when it cannot, saying what to do
     */
    protected abstract void checkTogether(B first, B second);

    /**
     * Combines {@code src}, which no kernel on {@code acc}'s queue can read in place (host memory, another
     * context or device), into {@code acc}; the arguments are already checked.
     */
    protected abstract CompletableFuture<Void> reduceFrom(ReduceOp op, B acc, long accOffset, DeviceBuffer src,
                                                          long srcOffset, long bytes);

    /** Copies host memory {@code from} into {@code to} from byte {@code toOffset}; the ranges are checked. */
    protected abstract CompletableFuture<Void> upload(MemorySegment from, B to, long toOffset);

    /** Copies {@code to.byteSize()} bytes of {@code from} from byte {@code fromOffset} into host memory {@code to}. */
    protected abstract CompletableFuture<Void> download(B from, long fromOffset, MemorySegment to);

    /** Copies {@code bytes} bytes between two of this runtime's buffers, on one device or two. */
    protected abstract CompletableFuture<Void> copyOnDevices(B src, long srcOffset, B dst, long dstOffset, long bytes);

    /**
     * Checks that {@code on}'s device computes {@code dtype} (an OpenCL device without double precision has no
     * float64); nothing by default.
     */
    protected void checkComputes(B on, DType dtype) {
    }

    /**
     * {@code b} as this runtime's buffer.
     *
     * @throws IllegalArgumentException for another runtime's buffer or host memory
     */
    protected final B own(DeviceBuffer b) {
        if (bufferType.isInstance(b)) {
            return bufferType.cast(b);
        }
        throw new IllegalArgumentException("buffer " + b + " is not " + memoryName + " device memory (it is on "
                + b.device() + "); the " + memoryName + " runtime works on buffers it allocated or wrapped");
    }

    // ---- the operations ------------------------------------------------------------------------------------

    @Override
    public final CompletableFuture<Void> copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset,
                                              long bytes) {
        try {
            DeviceArguments.checkCopy(src, srcOffset, dst, dstOffset, bytes);
            if (bytes == 0) {
                return done();
            }
            if (src.isHost() && dst.isHost()) {
                MemorySegment.copy(src.segment(), srcOffset, dst.segment(), dstOffset, bytes);
                return done();
            }
            if (src.isHost()) {
                return upload(src.segment().asSlice(srcOffset, bytes), own(dst), dstOffset);
            }
            if (dst.isHost()) {
                return download(own(src), srcOffset, dst.segment().asSlice(dstOffset, bytes));
            }
            return copyOnDevices(own(src), srcOffset, own(dst), dstOffset, bytes);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public final CompletableFuture<Void> elementwise(ElementwiseOp op, DeviceBuffer a, DeviceBuffer b,
                                                     DeviceBuffer out) {
        try {
            B y = own(b);
            DeviceArguments.checkElementwise(op, a, b, out);
            return elementwise(op, a, y, b.numel() == 1 ? 0L : 1L, 0.0, out);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public final CompletableFuture<Void> elementwise(ElementwiseOp op, DeviceBuffer a, double b, DeviceBuffer out) {
        try {
            DeviceArguments.checkElementwise(op, a, null, out);
            return elementwise(op, a, null, 0L, b, out);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** One launch of the element-wise kernel: {@code b} read with stride {@code bs}, or null for scalar {@code sv}. */
    private CompletableFuture<Void> elementwise(ElementwiseOp op, DeviceBuffer a, B b, long bs, double sv,
                                                DeviceBuffer out) {
        B x = own(a);
        B z = own(out);
        checkTogether(x, z);
        if (b != null) {
            checkTogether(x, b);
        }
        long n = a.numel();
        // The kernel takes some buffer for b even when it reads the scalar instead.
        B y = b != null ? b : x;
        return n == 0 ? done() : launch(x, DeviceKernels.elementwiseName(a.dtype()), n, args(operand(x, 0),
                operand(y, 0), operand(z, 0), n, bs, op.ordinal(), sv, b == null ? 1 : 0));
    }

    @Override
    public final CompletableFuture<Void> cast(DeviceBuffer src, DeviceBuffer dst) {
        try {
            B s = own(src);
            B d = own(dst);
            DeviceArguments.checkCast(src, dst);
            checkTogether(s, d);
            long n = src.numel();
            return n == 0 ? done() : launch(s, DeviceKernels.castName(src.dtype(), dst.dtype()), n,
                    args(operand(s, 0), operand(d, 0), n));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public final CompletableFuture<Void> sum(DeviceBuffer src, DeviceBuffer out) {
        try {
            B s = own(src);
            B o = own(out);
            DeviceArguments.checkSum(src, out);
            checkTogether(s, o);
            if (src.numel() == 0) {
                return fill(out, 0);
            }
            return launchOneGroup(s, DeviceKernels.sumName(src.dtype()), DeviceKernels.SUM_ITEMS,
                    args(operand(s, 0), operand(o, 0), src.numel()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public final CompletableFuture<Void> launch(KernelSource program, String kernel, long items, int groupSize,
                                                Object... args) {
        try {
            DeviceArguments.checkLaunch(program, kernel, items, groupSize, args);
            B on = null;
            Object[] spread = new Object[args.length];
            for (int i = 0; i < args.length; i++) {
                if (args[i] instanceof DeviceBuffer d) {
                    B b = own(d);
                    if (on == null) {
                        on = b;
                    } else {
                        checkTogether(on, b);
                    }
                    spread[i] = operand(b, 0);
                } else {
                    spread[i] = args[i];
                }
            }
            if (on == null) {
                throw new IllegalArgumentException("launch of " + kernel + ": no device buffer among the arguments "
                        + "says which device runs it");
            }
            return items == 0 ? done() : launchProgram(on, program, kernel, items, groupSize, args(spread));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public final CompletableFuture<Void> gemm(int batch, int m, int n, int k, double alpha, GemmOperand a,
                                              GemmOperand b, double beta, GemmOperand c) {
        try {
            B x = own(a.buffer());
            B y = own(b.buffer());
            B z = own(c.buffer());
            DeviceArguments.checkGemm(batch, m, n, k, a, b, c);
            checkTogether(z, x);
            checkTogether(z, y);
            checkComputes(z, z.dtype());
            return batch == 0 || m == 0 || n == 0 ? done() : gemmOn(batch, m, n, k, alpha, a, b, beta, c);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Runs a checked GEMM of at least one element on the buffers' device. By default the dialect's own kernel
     * ({@link DeviceKernels#gemmName}); a runtime with a BLAS overrides this.
     */
    protected CompletableFuture<Void> gemmOn(int batch, int m, int n, int k, double alpha, GemmOperand a,
                                             GemmOperand b, double beta, GemmOperand c) {
        B z = own(c.buffer());
        long items = (long) batch * m * n;
        return launch(z, DeviceKernels.gemmName(z.dtype()), items, args(element(a), element(b), element(c), (long) m,
                (long) n, (long) k, a.ld(), b.ld(), c.ld(), a.batchStride(), b.batchStride(), c.batchStride(),
                a.transposed() ? 1 : 0, b.transposed() ? 1 : 0, items, alpha, beta));
    }

    /** The {@link #operand} of a GEMM matrix's first element. */
    protected final Object[] element(GemmOperand o) {
        return operand(own(o.buffer()), o.offset() * o.buffer().dtype().byteSize());
    }

    @Override
    public final CompletableFuture<Void> reduce(ReduceOp op, DeviceBuffer acc, long accOffset, DeviceBuffer src,
                                                long srcOffset, long bytes) {
        try {
            B a = own(acc);
            DeviceArguments.checkReduce(op, acc, accOffset, src, srcOffset, bytes);
            checkComputes(a, acc.dtype());
            if (bytes == 0) {
                return done();
            }
            if (bufferType.isInstance(src) && together(a, bufferType.cast(src))) {
                long n = bytes / acc.dtype().byteSize();
                return launch(a, DeviceKernels.reduceName(acc.dtype()), n, args(operand(a, accOffset),
                        operand(bufferType.cast(src), srcOffset), n, op.code()));
            }
            return reduceFrom(op, a, accOffset, src, srcOffset, bytes);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Combines {@code src}, a buffer next to {@code acc} (as {@link #reduceFrom} stages one), into {@code acc}. */
    protected final CompletableFuture<Void> reduceNear(ReduceOp op, B acc, long accOffset, B src, long bytes) {
        long n = bytes / acc.dtype().byteSize();
        return launch(acc, DeviceKernels.reduceName(acc.dtype()), n, args(operand(acc, accOffset), operand(src, 0), n,
                op.code()));
    }

    @Override
    public final CompletableFuture<Void> divide(DeviceBuffer acc, long offset, long bytes, int divisor) {
        try {
            B a = own(acc);
            DeviceArguments.checkDivide(acc, offset, bytes, divisor);
            checkComputes(a, acc.dtype());
            long n = bytes / acc.dtype().byteSize();
            return n == 0 ? done() : launch(a, DeviceKernels.divideName(acc.dtype()), n, args(operand(a, offset), n,
                    divisor));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private boolean together(B first, B second) {
        try {
            checkTogether(first, second);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static CompletableFuture<Void> done() {
        return CompletableFuture.completedFuture(null);
    }

    /** The arguments in order, the two values of each {@link #operand} spread out. */
    private static Object[] args(Object... parts) {
        List<Object> out = new ArrayList<>();
        for (Object p : parts) {
            if (p instanceof Object[] pair) {
                out.addAll(Arrays.asList(pair));
            } else {
                out.add(p);
            }
        }
        return out.toArray();
    }
}
