package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.util.Arrays;

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
            Arrays.fill(ones, 1);
            Threads.parallelFor(0, numel, 1 << 15, (s, e) -> {
                long[] off = new long[ops];
                for (int k = 0; k < ops; k++) {
                    off[k] = offsets[k] + s;
                }
                inner.run(off, ones, e - s);
            });
            return;
        }
        Walk w = coalesce(shape, strides);
        int rank = w.shape().length;
        int n = w.shape()[rank - 1];
        int[] innerStride = new int[ops];
        for (int k = 0; k < ops; k++) {
            innerStride[k] = w.strides()[k][rank - 1];
        }
        if (rank == 1) {
            // One run (a transpose or a broadcast that coalesced whole): split it, not rows, across threads.
            Threads.parallelFor(0, n, 1 << 15, (s, e) -> {
                long[] off = new long[ops];
                for (int k = 0; k < ops; k++) {
                    off[k] = offsets[k] + (long) s * innerStride[k];
                }
                inner.run(off, innerStride, e - s);
            });
            return;
        }
        int rows = numel / n;
        Threads.parallelFor(0, rows, Math.max(1, (1 << 15) / n),
                (s, e) -> walkRows(w.shape(), offsets, w.strides(), innerStride, s, e, inner));
    }

    /** A walk's shape and each operand's strides, outermost dimension first. */
    record Walk(int[] shape, int[][] strides) {
    }

    /**
     * Drops size-1 dimensions and merges neighbours that every operand steps through as one (outer stride =
     * inner stride x inner size, broadcast zeros included), as PyTorch's TensorIterator coalesces dimensions:
     * a {@code [N, C, H, W]} product with a {@code [N, C, 1, 1]} dropout mask then runs over {@code H * W}
     * elements at a time rather than {@code W} (1 ms against 0.1 ms for 164k floats).
     */
    static Walk coalesce(int[] shape, int[][] strides) {
        int rank = shape.length;
        int ops = strides.length;
        int[] sh = new int[Math.max(1, rank)];
        int[][] st = new int[ops][Math.max(1, rank)];
        int kept = 0;
        for (int d = rank - 1; d >= 0; d--) {
            if (shape[d] == 1) {
                continue;
            }
            if (kept > 0 && mergesInto(strides, d, st, kept - 1, sh[kept - 1])) {
                sh[kept - 1] *= shape[d];
                continue;
            }
            sh[kept] = shape[d];
            for (int k = 0; k < ops; k++) {
                st[k][kept] = strides[k][d];
            }
            kept++;
        }
        if (kept == 0) {
            sh[0] = 1;
            kept = 1;
        }
        int[] outShape = new int[kept];
        int[][] outStrides = new int[ops][kept];
        for (int i = 0; i < kept; i++) {
            outShape[i] = sh[kept - 1 - i];
            for (int k = 0; k < ops; k++) {
                outStrides[k][i] = st[k][kept - 1 - i];
            }
        }
        return new Walk(outShape, outStrides);
    }

    private static boolean mergesInto(int[][] strides, int d, int[][] st, int j, int size) {
        for (int k = 0; k < strides.length; k++) {
            if ((long) strides[k][d] != (long) st[k][j] * size) {
                return false;
            }
        }
        return true;
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
