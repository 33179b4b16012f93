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

    /**
     * Log-softmax ({@code log}: {@code out = x - max(x) - log(sum(exp(x - max(x))))}) or softmax ({@code out =
     * exp(x - max(x)) / sum(exp(x - max(x)))}) over each slice.
     */
    public static void forward(boolean log, MemorySegment x, MemorySegment out, int outer, int n, int inner,
            boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double max = max(x, base, n, inner, isFloat);
                double sum = sumExp(x, base, n, inner, max, isFloat);
                double logSum = Math.log(sum);
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double shifted = round(Access.load(x, at, isFloat) - max, isFloat);
                    double v = log ? shifted - logSum : round(Math.exp(shifted), isFloat) / sum;
                    Access.store(out, at, v, isFloat);
                }
            }
        }
    }

    /**
     * The backward of {@link #forward} given its output {@code y}: {@code gradIn = grad - exp(y) * sum(grad)} for
     * log-softmax, {@code gradIn = y * (grad - sum(grad * y))} for softmax.
     */
    public static void backward(boolean log, MemorySegment grad, MemorySegment y, MemorySegment gradIn, int outer,
            int n, int inner, boolean isFloat) {
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long base = (long) o * n * inner + j;
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double g = Access.load(grad, at, isFloat);
                    sum += log ? g : g * Access.load(y, at, isFloat);
                }
                for (int i = 0; i < n; i++) {
                    long at = base + (long) i * inner;
                    double g = Access.load(grad, at, isFloat);
                    double yi = Access.load(y, at, isFloat);
                    Access.store(gradIn, at, log ? g - Math.exp(yi) * sum : yi * (g - sum), isFloat);
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
