package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.MemorySegment;

/**
 * Batch normalisation over the channels of a contiguous {@code [N, C, S]} layout (S = spatial size, 1 for
 * {@code [N, C]}): statistics, normalisation and the backward pass, one channel per task, accumulating in
 * double. float32 when {@code isFloat}, else float64.
 */
public final class BatchNormKernel {
    private BatchNormKernel() {
    }

    /** The layout: batch, channels and elements per channel plane. */
    public record Layout(int n, int c, int s, boolean isFloat) {
        long at(int batch, int channel) {
            return ((long) batch * c + channel) * s;
        }

        /** Values per channel. */
        public long count() {
            return (long) n * s;
        }
    }

    /** Per-channel mean and biased variance of {@code x}, into {@code mean[c]} and {@code var[c]}. */
    public static void statistics(MemorySegment x, Layout l, double[] mean, double[] var) {
        Threads.parallelFor(0, l.c(), Threads.grain(l.count()), (c0, c1) -> {
            for (int ch = c0; ch < c1; ch++) {
                double sum = 0;
                for (int b = 0; b < l.n(); b++) {
                    long o = l.at(b, ch);
                    for (int i = 0; i < l.s(); i++) {
                        sum += Access.load(x, o + i, l.isFloat());
                    }
                }
                double m = sum / l.count();
                double sq = 0;
                for (int b = 0; b < l.n(); b++) {
                    long o = l.at(b, ch);
                    for (int i = 0; i < l.s(); i++) {
                        double d = Access.load(x, o + i, l.isFloat()) - m;
                        sq += d * d;
                    }
                }
                mean[ch] = m;
                var[ch] = sq / l.count();
            }
        });
    }

    /** {@code y = (x - mean) * invstd * scale + shift}, channel by channel. */
    public static void normalize(MemorySegment x, Layout l, double[] mean, double[] invstd, double[] scale,
            double[] shift, MemorySegment y) {
        Threads.parallelFor(0, l.c(), Threads.grain(l.count()), (c0, c1) -> {
            for (int ch = c0; ch < c1; ch++) {
                double a = invstd[ch] * scale[ch];
                double b = shift[ch] - mean[ch] * a;
                for (int n = 0; n < l.n(); n++) {
                    long o = l.at(n, ch);
                    for (int i = 0; i < l.s(); i++) {
                        Access.store(y, o + i, Access.load(x, o + i, l.isFloat()) * a + b, l.isFloat());
                    }
                }
            }
        });
    }

    /**
     * The backward pass. Writes {@code dScale[c] = sum(g * xhat)} and {@code dShift[c] = sum(g)}, and, when
     * {@code gx} is not null, the input gradient: in training (batch statistics)
     * {@code scale * invstd * (g - mean(g) - xhat * mean(g * xhat))}, in inference {@code g * scale * invstd}.
     */
    public static void backward(MemorySegment x, MemorySegment g, Layout l, double[] mean, double[] invstd,
            double[] scale, boolean training, double[] dScale, double[] dShift, MemorySegment gx) {
        Threads.parallelFor(0, l.c(), Threads.grain(l.count()), (c0, c1) -> {
            for (int ch = c0; ch < c1; ch++) {
                double sg = 0;
                double sgx = 0;
                for (int n = 0; n < l.n(); n++) {
                    long o = l.at(n, ch);
                    for (int i = 0; i < l.s(); i++) {
                        double gv = Access.load(g, o + i, l.isFloat());
                        sg += gv;
                        sgx += gv * (Access.load(x, o + i, l.isFloat()) - mean[ch]) * invstd[ch];
                    }
                }
                dScale[ch] = sgx;
                dShift[ch] = sg;
                if (gx != null) {
                    inputGradient(x, g, l, ch, mean[ch], invstd[ch], scale[ch], training ? sg : 0,
                            training ? sgx : 0, gx);
                }
            }
        });
    }

    private static void inputGradient(MemorySegment x, MemorySegment g, Layout l, int ch, double mean, double invstd,
            double scale, double sg, double sgx, MemorySegment gx) {
        double k = scale * invstd;
        double meanG = sg / l.count();
        double meanGx = sgx / l.count();
        for (int n = 0; n < l.n(); n++) {
            long o = l.at(n, ch);
            for (int i = 0; i < l.s(); i++) {
                double xhat = (Access.load(x, o + i, l.isFloat()) - mean) * invstd;
                Access.store(gx, o + i, k * (Access.load(g, o + i, l.isFloat()) - meanG - xhat * meanGx), l.isFloat());
            }
        }
    }
}
