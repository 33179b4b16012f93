package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The float64 GEMM behind {@link Gemm#dgemm}: op(B) is copied once into a row-major heap matrix, then each
 * row of C accumulates {@code a[i][p] * B[p][:]} with the Vector API, rows split across threads. float64
 * is for gradient checks and reference computations, not training, so this stays simple rather than
 * repeating the packed float32 kernel for a second element type.
 */
final class Dgemm {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    private static final ValueLayout.OfDouble DL = ValueLayout.JAVA_DOUBLE;

    private Dgemm() {
    }

    static void run(int m, int n, int k, double alpha, GemmMatrix a, GemmMatrix b, double beta, GemmMatrix c) {
        double[] rowMajorB = new double[Math.multiplyExact(k, n)];
        for (int p = 0; p < k; p++) {
            for (int j = 0; j < n; j++) {
                rowMajorB[p * n + j] = b.seg().getAtIndex(DL, b.index(p, j));
            }
        }
        long work = (long) m * n * k;
        Threads.parallelFor(0, m, (int) Math.max(1, (1L << 21) / Math.max(1, work / Math.max(m, 1))), (r0, r1) -> {
            double[] acc = new double[n];
            for (int i = r0; i < r1; i++) {
                Arrays.fill(acc, 0);
                for (int p = 0; p < k; p++) {
                    axpy(a.seg().getAtIndex(DL, a.index(i, p)), rowMajorB, p * n, acc, n);
                }
                for (int j = 0; j < n; j++) {
                    long at = c.index(i, j);
                    double old = beta == 0 ? 0 : beta * c.seg().getAtIndex(DL, at);
                    c.seg().setAtIndex(DL, at, alpha * acc[j] + old);
                }
            }
        });
    }

    /** {@code acc[0..n) += s * x[from .. from+n)}. */
    private static void axpy(double s, double[] x, int from, double[] acc, int n) {
        DoubleVector sv = DoubleVector.broadcast(D, s);
        int j = 0;
        for (; j <= n - D.length(); j += D.length()) {
            DoubleVector.fromArray(D, x, from + j).fma(sv, DoubleVector.fromArray(D, acc, j)).intoArray(acc, j);
        }
        for (; j < n; j++) {
            acc[j] = Math.fma(s, x[from + j], acc[j]);
        }
    }
}
