package io.tensorbus.spi.support;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.ElementwiseOp;
import io.tensorbus.spi.GemmOperand;
import io.tensorbus.spi.KernelSource;
import java.util.Arrays;
import java.util.Objects;

/**
 * The argument checks every {@link DeviceRuntime} makes before it queues work, written once so that the OpenCL
 * and CUDA runtimes reject the same calls with the same messages. Each method throws
 * {@link IllegalArgumentException} naming what was wrong and what is allowed.
 */
public final class DeviceArguments {
    private DeviceArguments() {
    }

    /**
     * The element count of {@code shape}.
     *
     * @throws IllegalArgumentException for a negative extent
     * @throws ArithmeticException when the count overflows a long
     */
    public static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative extent in shape " + Arrays.toString(shape));
            }
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** Checks that {@code [offset, offset + bytes)} is a range of whole elements inside {@code b}. */
    public static void checkRange(DeviceBuffer b, long offset, long bytes, String what) {
        int e = b.dtype().byteSize();
        if (offset < 0 || bytes < 0 || offset + bytes > b.byteSize() || offset % e != 0 || bytes % e != 0) {
            throw new IllegalArgumentException(what + " range [" + offset + ", " + (offset + bytes) + ") is not a "
                    + "whole-element range of " + b + " (" + b.byteSize() + " bytes, " + e + " per element)");
        }
    }

    /** Checks a view of {@code shape} elements of {@code dtype} at byte {@code offset} of {@code buffer}. */
    public static void checkView(DeviceBuffer buffer, long offset, DType dtype, long[] shape) {
        long bytes = numel(shape) * dtype.byteSize();
        if (offset < 0 || offset + bytes > buffer.byteSize() || offset % dtype.byteSize() != 0) {
            throw new IllegalArgumentException("a view of " + dtype + Arrays.toString(shape) + " at byte " + offset
                    + " does not fit " + buffer + " (" + buffer.byteSize() + " bytes) on whole elements");
        }
    }

    /**
     * Checks {@code out = a op b}: {@code b}, when not null, has {@code a}'s dtype and as many elements or one;
     * {@code out} has {@code a}'s dtype and size; the op is defined for the dtype.
     */
    public static void checkElementwise(ElementwiseOp op, DeviceBuffer a, DeviceBuffer b, DeviceBuffer out) {
        DType t = a.dtype();
        if (b != null && b.dtype() != t) {
            throw new IllegalArgumentException(op + " needs one dtype, got " + t + " and " + b.dtype());
        }
        if (b != null && b.numel() != a.numel() && b.numel() != 1) {
            throw new IllegalArgumentException(op + " of " + a + " and " + b + ": the second operand must have "
                    + "as many elements as the first, or one");
        }
        if (out.dtype() != t || out.numel() != a.numel()) {
            throw new IllegalArgumentException(op + " of " + a + " into " + out + ": the output must have the input's "
                    + "dtype and size");
        }
        if (t == DType.BOOL || (op == ElementwiseOp.DIV && !t.isFloatingPoint())) {
            throw new IllegalArgumentException(op + " is not defined for " + t + " on " + a.device());
        }
    }

    /** Checks that a cast of {@code src} into {@code dst} has as many elements on both sides. */
    public static void checkCast(DeviceBuffer src, DeviceBuffer dst) {
        if (src.numel() != dst.numel()) {
            throw new IllegalArgumentException("cast of " + src + " into " + dst + ": the element counts differ");
        }
    }

    /** Checks that {@code out} is one element of {@link DeviceKernels#sumType} of {@code src}'s dtype. */
    public static void checkSum(DeviceBuffer src, DeviceBuffer out) {
        DType want = DeviceKernels.sumType(src.dtype());
        if (out.numel() != 1 || out.dtype() != want) {
            throw new IllegalArgumentException("the sum of " + src + " goes into one " + want + " element, not " + out);
        }
    }

    /** Checks a reduction of {@code bytes} bytes of {@code src} into {@code acc}. */
    public static void checkReduce(ReduceOp op, DeviceBuffer acc, long accOffset, DeviceBuffer src, long srcOffset,
                                   long bytes) {
        if (src.dtype() != acc.dtype()) {
            throw new IllegalArgumentException("cannot reduce " + src.dtype() + " into " + acc.dtype());
        }
        op.checkSupports(acc.dtype());
        checkRange(acc, accOffset, bytes, "accumulator");
        checkRange(src, srcOffset, bytes, "source");
    }

    /** Checks the division that ends an average: a floating-point dtype and a divisor of at least 1. */
    public static void checkDivide(DeviceBuffer acc, long offset, long bytes, int divisor) {
        if (!acc.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("cannot divide " + acc.dtype() + ": averages need a floating-point"
                    + " dtype");
        }
        if (divisor < 1) {
            throw new IllegalArgumentException("divisor=" + divisor + " must be at least 1");
        }
        checkRange(acc, offset, bytes, "accumulator");
    }

    /** Checks a copy's two ranges. */
    public static void checkCopy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        checkRange(src, srcOffset, bytes, "source");
        checkRange(dst, dstOffset, bytes, "destination");
    }

    /**
     * Checks a kernel launch: a kernel name, a non-negative size, a group size that divides it, and arguments of
     * the kinds a kernel takes.
     */
    public static void checkLaunch(KernelSource program, String kernel, long items, int groupSize, Object[] args) {
        Objects.requireNonNull(program, "program");
        if (kernel == null || kernel.isBlank()) {
            throw new IllegalArgumentException("launch of " + program.name() + ": no kernel name");
        }
        if (items < 0 || groupSize < 0 || (groupSize > 0 && items % groupSize != 0)) {
            throw new IllegalArgumentException("launch of " + kernel + ": " + items + " work items in groups of "
                    + groupSize + "; items must be >= 0 and a multiple of the group size (0: the runtime's choice)");
        }
        for (Object a : args) {
            if (!(a instanceof DeviceBuffer || a instanceof Integer || a instanceof Long || a instanceof Float
                    || a instanceof Double)) {
                throw new IllegalArgumentException("launch of " + kernel + ": argument " + a + " is not a device "
                        + "buffer, Integer, Long, Float or Double");
            }
        }
    }

    /** Checks a GEMM: one floating dtype, an untransposed result, and every matrix inside its buffer. */
    public static void checkGemm(int batch, int m, int n, int k, GemmOperand a, GemmOperand b, GemmOperand c) {
        if (batch < 0 || m < 0 || n < 0 || k < 0) {
            throw new IllegalArgumentException("gemm: negative size in batch " + batch + ", m " + m + ", n " + n
                    + ", k " + k);
        }
        DType d = c.buffer().dtype();
        if ((d != DType.FLOAT32 && d != DType.FLOAT64) || a.buffer().dtype() != d || b.buffer().dtype() != d) {
            throw new IllegalArgumentException("gemm needs three float32 or three float64 matrices, got "
                    + a.buffer().dtype() + ", " + b.buffer().dtype() + " and " + d);
        }
        if (c.transposed()) {
            throw new IllegalArgumentException("gemm: the result matrix cannot be transposed");
        }
        checkMatrix("A", a, batch, m, k);
        checkMatrix("B", b, batch, k, n);
        checkMatrix("C", c, batch, m, n);
    }

    private static void checkMatrix(String name, GemmOperand o, int batch, int rows, int cols) {
        long r = o.transposed() ? cols : rows;
        long c = o.transposed() ? rows : cols;
        if (batch == 0 || r == 0 || c == 0) {
            return;
        }
        if (o.ld() < c) {
            throw new IllegalArgumentException("gemm: " + name + " has rows of " + c + " elements but leading "
                    + "dimension " + o.ld());
        }
        long last = o.offset() + (batch - 1) * o.batchStride() + (r - 1) * o.ld() + c - 1;
        if (last >= o.buffer().numel()) {
            throw new IllegalArgumentException("gemm: " + name + " (" + batch + " x " + r + " x " + c + ", ld "
                    + o.ld() + ", stride " + o.batchStride() + ", offset " + o.offset() + ") reaches element " + last
                    + " of a buffer of " + o.buffer().numel());
        }
    }
}
