package io.tensorbus.io.impl;

import io.tensorbus.DType;
import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.io.CodecException;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Tensors in {@link io.tensorbus.io.ObjectCodec}'s format: dtype code, flags, rank, dimensions (4 bytes
 * each), then the elements in row-major order, little-endian. The autograd graph does not travel; the
 * requires-grad flag does, as in a pickled {@code torch.Tensor}.
 */
public final class CodecTensors {
    /** The most dimensions a tensor in this format has. */
    public static final int MAX_RANK = 64;

    private CodecTensors() {
    }

    /**
     * Writes a tensor (tag included); a non-contiguous tensor is written in row-major order.
     *
     * @throws IllegalArgumentException when the tensor has more than {@link #MAX_RANK} dimensions
     */
    public static void write(CodecWriter out, Tensor t) {
        int[] shape = t.shape();
        if (shape.length > MAX_RANK) {
            throw new IllegalArgumentException("cannot encode a tensor of " + shape.length + " dimensions; at most "
                    + MAX_RANK + " are supported");
        }
        // detach: making a copy contiguous must not record an autograd node.
        Tensor c = TensorBytes.contiguous(t.detach());
        out.u8(CodecTag.TENSOR);
        out.u8(CodecTag.dtypeCode(t.dtype()));
        out.u8(t.requiresGrad() ? CodecTag.FLAG_REQUIRES_GRAD : 0);
        out.u8(shape.length);
        for (int d : shape) {
            out.i32(d);
        }
        out.segment(TensorBytes.of(c), t.dtype().byteSize());
    }

    /**
     * Reads a tensor whose tag (at offset {@code at}) was just read. The element bytes are checked against
     * the input before the tensor is allocated.
     *
     * @throws CodecException for an unknown dtype or flag, a negative dimension, too many dimensions or
     *     elements, data that overruns the input, or a bool element other than 0 and 1
     */
    public static Tensor read(CodecReader in, int at) {
        DType dtype = dtype(in);
        boolean requiresGrad = requiresGrad(in, dtype);
        int[] shape = shape(in);
        long numel = numel(shape, in, at);
        long bytes = numel * dtype.byteSize();
        if (bytes > in.remaining()) {
            throw in.fail(in.position(), "tensor data of " + dtype + " " + Dims.str(shape) + " needs " + bytes
                    + " bytes but only " + in.remaining() + " are left");
        }
        Tensor t = Tensor.empty(dtype, shape);
        if (numel > 0) {
            int dataAt = in.position();
            in.segment(t.dataSegment(), dtype.byteSize(), "tensor data");
            if (dtype == DType.BOOL) {
                checkBools(t.dataSegment(), dataAt, in);
            }
        }
        return requiresGrad ? t.requiresGrad(true) : t;
    }

    private static DType dtype(CodecReader in) {
        int at = in.position();
        int code = in.u8("tensor dtype");
        DType dtype = CodecTag.dtype(code);
        if (dtype == null) {
            throw in.fail(at, "unknown tensor dtype code " + code + "; known: " + CodecTag.dtypeCodes());
        }
        return dtype;
    }

    private static boolean requiresGrad(CodecReader in, DType dtype) {
        int at = in.position();
        int flags = in.u8("tensor flags");
        if ((flags & ~CodecTag.FLAG_REQUIRES_GRAD) != 0) {
            throw in.fail(at, "unknown tensor flags 0x" + Integer.toHexString(flags)
                    + "; this version knows only 0x1 (requires grad)");
        }
        boolean rg = (flags & CodecTag.FLAG_REQUIRES_GRAD) != 0;
        if (rg && !dtype.isFloatingPoint()) {
            throw in.fail(at, "a " + dtype + " tensor cannot require gradients; only floating point ones can");
        }
        return rg;
    }

    private static int[] shape(CodecReader in) {
        int at = in.position();
        int rank = in.u8("tensor rank");
        if (rank > MAX_RANK) {
            throw in.fail(at, "tensor rank " + rank + " is above the " + MAX_RANK + " dimensions allowed");
        }
        int[] shape = new int[rank];
        for (int i = 0; i < rank; i++) {
            int dAt = in.position();
            shape[i] = in.i32("tensor dimension");
            if (shape[i] < 0) {
                throw in.fail(dAt, "tensor dimension " + i + " is negative (" + shape[i] + "); dimensions are >= 0");
            }
        }
        return shape;
    }

    private static long numel(int[] shape, CodecReader in, int at) {
        long n = 1;
        for (int d : shape) {
            n *= d;
            if (n > Integer.MAX_VALUE) {
                throw in.fail(at, "tensor shape " + Dims.str(shape) + " has more than " + Integer.MAX_VALUE
                        + " elements, the most a tensorbus tensor holds");
            }
        }
        return n;
    }

    private static void checkBools(MemorySegment data, int dataAt, CodecReader in) {
        for (long i = 0; i < data.byteSize(); i++) {
            byte b = data.get(ValueLayout.JAVA_BYTE, i);
            if (b != 0 && b != 1) {
                throw in.fail(dataAt + i, "bool tensor element " + i + " is " + b + "; bools are 0 or 1");
            }
        }
    }
}
