package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;

/**
 * Softmax and log-softmax along one dimension, forward and backward, as ATen's {@code SoftMaxKernel} computes
 * them: one pass for the maximum, one for the sum of exponentials, one for the output, so that a classifier's
 * loss is a single small kernel rather than six element-wise ops and a reduction (each with its own allocation,
 * broadcast and compiled loop).
 *
 * <p>Every buffer is a contiguous float32 ({@code isFloat}) or float64 tensor seen as {@code [outer, n, inner]},
 * the softmax running over {@code n} elements {@code inner} apart. The shift by the maximum keeps {@code exp}
 * finite; sums accumulate in double. A NaN anywhere in a slice makes the whole slice NaN, as in PyTorch.
 */
public final class SoftMax {
    private SoftMax() {
    }

    /** {@code out = x - max(x) - log(sum(exp(x - max(x))))} over each slice. */
    public static void logSoftmax(MemorySegment x, MemorySegment out, int outer, int n, int inner, boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double max = max(x, base, n, inner, isFloat);
                double logSum = Math.log(sumExp(x, base, n, inner, max, isFloat));
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    Access.store(out, at, round(Access.load(x, at, isFloat) - max, isFloat) - logSum, isFloat);
                }
            }
        }
    }

    /** {@code out = exp(x - max(x)) / sum(exp(x - max(x)))} over each slice. */
    public static void softmax(MemorySegment x, MemorySegment out, int outer, int n, int inner, boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double max = max(x, base, n, inner, isFloat);
                double sum = sumExp(x, base, n, inner, max, isFloat);
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double e = round(Math.exp(round(Access.load(x, at, isFloat) - max, isFloat)), isFloat);
                    Access.store(out, at, e / sum, isFloat);
                }
            }
        }
    }

    /** Log-softmax's backward: {@code gradIn = grad - exp(y) * sum(grad)} for its output {@code y}. */
    public static void logSoftmaxBackward(MemorySegment grad, MemorySegment y, MemorySegment gradIn, int outer, int n,
            int inner, boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    sum += Access.load(grad, base + (long) i * inner, isFloat);
                }
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double g = Access.load(grad, at, isFloat);
                    Access.store(gradIn, at, g - Math.exp(Access.load(y, at, isFloat)) * sum, isFloat);
                }
            }
        }
    }

    /** Softmax's backward: {@code gradIn = y * (grad - sum(grad * y))} for its output {@code y}. */
    public static void softmaxBackward(MemorySegment grad, MemorySegment y, MemorySegment gradIn, int outer, int n,
            int inner, boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double dot = 0;
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    dot += Access.load(grad, at, isFloat) * Access.load(y, at, isFloat);
                }
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double yi = Access.load(y, at, isFloat);
                    Access.store(gradIn, at, yi * (Access.load(grad, at, isFloat) - dot), isFloat);
                }
            }
        }
    }

    /** The slice's maximum; NaN if any element is NaN. */
    private static double max(MemorySegment x, long base, int n, int inner, boolean isFloat) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, Access.load(x, base + (long) i * inner, isFloat));
        }
        return max;
    }

    private static double sumExp(MemorySegment x, long base, int n, int inner, double max, boolean isFloat) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += round(Math.exp(round(Access.load(x, base + (long) i * inner, isFloat) - max, isFloat)), isFloat);
        }
        return sum;
    }

    /** Rounds to float32 where the tensor is float32, so that intermediate values match a float32 computation. */
    private static double round(double v, boolean isFloat) {
        return isFloat ? (float) v : v;
    }
}
