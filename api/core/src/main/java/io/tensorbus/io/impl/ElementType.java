package io.tensorbus.io.impl;

import io.tensorbus.DType;
import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * How one element is stored in a file, and the tensorbus {@link DType} it is read as.
 *
 * <p>Most file types are a tensorbus dtype in little-endian order and are read straight into the tensor's
 * memory. Big-endian data is byte-swapped after reading. Small integer types that tensorbus has no dtype
 * for (int8, uint8, int16, uint16, uint32) are widened losslessly: to int32, and uint32 to int64.
 *
 * @param name the file format's name for the type ({@code <f4}, {@code U8}...), for messages
 * @param target the dtype of the tensor that is created
 * @param itemSize bytes per element in the file
 * @param signed whether a widened integer is sign-extended (else zero-extended)
 * @param order the byte order in the file
 */
public record ElementType(String name, DType target, int itemSize, boolean signed, ByteOrder order) {

    /** A type stored exactly as tensorbus stores {@code dtype} (little-endian). */
    public static ElementType exact(String name, DType dtype) {
        return new ElementType(name, dtype, dtype.byteSize(), true, ByteOrder.LITTLE_ENDIAN);
    }

    /** True when the file bytes are the tensor bytes (no swap, no widening): they can be used in place. */
    public boolean isExact() {
        return itemSize == target.byteSize() && order == ByteOrder.nativeOrder();
    }

    /**
     * Reads {@code numel(shape)} elements in C order from {@code in} into a new tensor.
     *
     * @throws io.tensorbus.io.TensorFormatException when the input ends early
     * @throws IOException when the input fails
     */
    public Tensor read(ByteInput in, int[] shape, long numel) throws IOException {
        in.require(numel * itemSize, "tensor data of shape " + Dims.str(shape));
        Tensor t = Tensor.empty(target, shape);
        if (isExact()) {
            in.readFully(TensorBytes.of(t), "tensor data");
            return t;
        }
        MemorySegment raw = Arena.ofAuto().allocate(numel * itemSize, 8);
        in.readFully(raw, "tensor data");
        convert(raw, TensorBytes.of(t), numel);
        return t;
    }

    /**
     * Decodes file bytes (C order) into a new tensor, copying.
     *
     * @param raw at least {@code numel(shape) * itemSize} bytes
     */
    public Tensor decode(MemorySegment raw, int[] shape, long numel) {
        Tensor t = Tensor.empty(target, shape);
        if (isExact()) {
            MemorySegment.copy(raw, 0, TensorBytes.of(t), 0, numel * itemSize);
        } else {
            convert(raw, TensorBytes.of(t), numel);
        }
        return t;
    }

    /** Swaps or widens {@code n} elements from {@code raw} into {@code dst} (native order, target size). */
    private void convert(MemorySegment raw, MemorySegment dst, long n) {
        for (long i = 0; i < n; i++) {
            long v = load(raw, i * itemSize);
            switch (target.byteSize()) {
                case 1 -> dst.set(ValueLayout.JAVA_BYTE, i, (byte) v);
                case 2 -> dst.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) v);
                case 4 -> dst.setAtIndex(ValueLayout.JAVA_INT, i, (int) v);
                default -> dst.setAtIndex(ValueLayout.JAVA_LONG, i, v);
            }
        }
    }

    /** The element at a byte offset, as its bit pattern, sign- or zero-extended to 64 bits. */
    private long load(MemorySegment raw, long at) {
        return switch (itemSize) {
            case 1 -> signed ? raw.get(ValueLayout.JAVA_BYTE, at) : raw.get(ValueLayout.JAVA_BYTE, at) & 0xffL;
            case 2 -> {
                short s = raw.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(order), at);
                yield signed ? s : s & 0xffffL;
            }
            case 4 -> {
                int v = raw.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(order), at);
                yield signed ? v : v & 0xffffffffL;
            }
            default -> raw.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(order), at);
        };
    }
}
