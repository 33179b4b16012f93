package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;

/**
 * Drives an inner loop over the last dimension of a strided N-d walk of up to three operands, so kernels
 * only write the 1-d loop. When every operand is contiguous the walk is one flat run split across threads.
 */
public final class NdLoop {
    private NdLoop() {
    }

    /** A 1-d run: {@code n} elements from the given element offsets with the given strides. */
    @FunctionalInterface
    public interface Inner {
        /** Processes one run; {@code off[k]} and {@code stride[k]} describe operand {@code k}. */
        void run(long[] off, int[] stride, int n);
    }

    /**
     * Walks {@code shape}; operand {@code k} starts at {@code offsets[k]} with {@code strides[k]}.
     *
     * @param contiguous true when every operand is row-major contiguous over {@code shape}
     */
    public static void forEach(int[] shape, long[] offsets, int[][] strides, boolean contiguous, Inner inner) {
        int numel = Shapes.numel(shape);
        if (numel == 0) {
            return;
        }
        int ops = offsets.length;
        if (contiguous || shape.length == 0) {
            int[] ones = new int[ops];
            java.util.Arrays.fill(ones, 1);
            Threads.parallelFor(0, numel, 1 << 15, (s, e) -> {
                long[] off = new long[ops];
                for (int k = 0; k < ops; k++) {
                    off[k] = offsets[k] + s;
                }
                inner.run(off, ones, e - s);
            });
            return;
        }
        int rank = shape.length;
        int[] innerStride = new int[ops];
        for (int k = 0; k < ops; k++) {
            innerStride[k] = strides[k][rank - 1];
        }
        int rows = numel / shape[rank - 1];
        Threads.parallelFor(0, rows, Math.max(1, (1 << 15) / shape[rank - 1]),
                (s, e) -> walkRows(shape, offsets, strides, innerStride, s, e, inner));
    }

    private static void walkRows(int[] shape, long[] base, int[][] strides, int[] innerStride, int rowStart,
            int rowEnd, Inner inner) {
        int rank = shape.length;
        int ops = base.length;
        long[] off = new long[ops];
        long[] cur = new long[ops];
        for (int row = rowStart; row < rowEnd; row++) {
            int r = row;
            for (int k = 0; k < ops; k++) {
                cur[k] = base[k];
            }
            for (int d = rank - 2; d >= 0; d--) {
                int i = r % shape[d];
                r /= shape[d];
                for (int k = 0; k < ops; k++) {
                    cur[k] += (long) i * strides[k][d];
                }
            }
            System.arraycopy(cur, 0, off, 0, ops);
            inner.run(off, innerStride, shape[rank - 1]);
        }
    }
}
