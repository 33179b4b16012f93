package io.tensorbus.distributed.impl;

import io.tensorbus.spi.DeviceBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Cutting one tensor's buffer into a block per rank, for the collectives that take one tensor where a backend
 * takes a list: {@code all_gather_into_tensor}, {@code reduce_scatter_tensor} and {@code all_to_all_single}.
 * The blocks are views of the buffer, never copies.
 */
public final class RankBlocks {
    private RankBlocks() {
    }

    /**
     * {@code whole} cut into {@code size} blocks shaped as {@code block}, one per rank in rank order.
     *
     * @throws IllegalArgumentException when {@code whole} is not {@code size} times {@code block} of its dtype
     */
    public static List<DeviceBuffer> equal(DeviceBuffer whole, String wholeName, DeviceBuffer block, String blockName,
                                           int size) {
        if (whole.dtype() != block.dtype() || whole.numel() != block.numel() * size) {
            throw new IllegalArgumentException(wholeName + " is " + whole + " but must be " + block.dtype() + " with "
                    + block.numel() * size + " elements (size() x " + blockName + ".numel())");
        }
        List<DeviceBuffer> blocks = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            blocks.add(TensorBuffers.block(whole, r * block.byteSize(), block.dtype(), block.shape()));
        }
        return blocks;
    }

    /**
     * The shape of one row (all dimensions but the first) of {@code buf}.
     *
     * @throws IllegalArgumentException when {@code buf} has no first dimension
     */
    public static long[] rowShape(DeviceBuffer buf, String what) {
        if (buf.shape().length == 0) {
            throw new IllegalArgumentException(what + " is a scalar; it needs a first dimension to split");
        }
        return Arrays.copyOfRange(buf.shape(), 1, buf.shape().length);
    }

    /**
     * {@code buf} cut along its first dimension into {@code size} blocks of {@code splits} rows (null: equal blocks).
     *
     * @throws IllegalArgumentException when the counts are not {@code size} non-negative numbers adding up to the
     *                                  first dimension, or no counts are given and it does not divide equally
     */
    public static List<DeviceBuffer> rows(DeviceBuffer buf, int[] splits, String what, long[] rowShape, int size) {
        long rows = buf.shape()[0];
        long rowBytes = rows == 0 ? 0 : buf.byteSize() / rows;
        int[] counts = splits;
        if (counts == null) {
            if (rows % size != 0) {
                throw new IllegalArgumentException("the first dimension of " + buf + " (" + rows + ") does not divide"
                        + " into " + size + " equal blocks: give " + what);
            }
            counts = new int[size];
            Arrays.fill(counts, (int) (rows / size));
        }
        if (counts.length != size || Arrays.stream(counts).anyMatch(c -> c < 0)
                || Arrays.stream(counts).asLongStream().sum() != rows) {
            throw new IllegalArgumentException(what + " " + Arrays.toString(counts) + " must hold " + size
                    + " counts of at least 0 that add up to the first dimension, " + rows);
        }
        List<DeviceBuffer> blocks = new ArrayList<>(size);
        long at = 0;
        for (int c : counts) {
            long[] shape = new long[rowShape.length + 1];
            shape[0] = c;
            System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
            blocks.add(TensorBuffers.block(buf, at, buf.dtype(), shape));
            at += c * rowBytes;
        }
        return blocks;
    }
}
