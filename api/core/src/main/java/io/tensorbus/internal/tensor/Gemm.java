package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * General matrix multiply on row-major matrices in off-heap memory:
 * {@code C = alpha * op(A) * op(B) + beta * C}, where {@code op(X)} is X or its transpose.
 * Offsets and leading dimensions are in elements; with {@code beta == 0} C is only written.
 *
 * <p>op(A) is {@code m x k}, op(B) is {@code k x n}, C is {@code m x n}. As in BLAS, A and B are not read
 * when {@code alpha == 0} or {@code k == 0}. The work is blocked for the caches, packed, run by a Vector API
 * micro-kernel and split over {@link io.tensorbus.tensor.Threads}.
 */
public final class Gemm {
    private Gemm() {
    }

    /** float32 GEMM; see the class comment for the layout. */
    public static void sgemm(boolean transA, boolean transB, int m, int n, int k, float alpha,
            MemorySegment a, long aOff, int lda, MemorySegment b, long bOff, int ldb,
            float beta, MemorySegment c, long cOff, int ldc) {
        checkShapes(transA, transB, m, n, k, a, aOff, lda, b, bOff, ldb, c, cOff, ldc, Float.BYTES);
        if (m == 0 || n == 0) {
            return;
        }
        if (k == 0 || alpha == 0f) {
            scale(m, n, beta, c, cOff, ldc);
            return;
        }
        GemmMatrix ma = new GemmMatrix(a, aOff, lda, transA);
        GemmMatrix mb = new GemmMatrix(b, bOff, ldb, transB);
        GemmMatrix mc = new GemmMatrix(c, cOff, ldc, false);
        if (SgemmDot.applies(transA, transB, m, n, k)) {
            SgemmDot.run(m, n, k, alpha, ma, mb, beta, mc);
            return;
        }
        GemmDriver.run(m, n, k, () -> new SgemmWorker(ma, mb, mc, n, k, alpha, beta));
    }

    /** float64 GEMM; see the class comment for the layout. */
    public static void dgemm(boolean transA, boolean transB, int m, int n, int k, double alpha,
            MemorySegment a, long aOff, int lda, MemorySegment b, long bOff, int ldb,
            double beta, MemorySegment c, long cOff, int ldc) {
        checkShapes(transA, transB, m, n, k, a, aOff, lda, b, bOff, ldb, c, cOff, ldc, Double.BYTES);
        if (m == 0 || n == 0) {
            return;
        }
        if (k == 0 || alpha == 0) {
            scale(m, n, beta, c, cOff, ldc);
            return;
        }
        GemmMatrix ma = new GemmMatrix(a, aOff, lda, transA);
        GemmMatrix mb = new GemmMatrix(b, bOff, ldb, transB);
        GemmMatrix mc = new GemmMatrix(c, cOff, ldc, false);
        Dgemm.run(m, n, k, alpha, ma, mb, beta, mc);
    }

    private static void checkShapes(boolean transA, boolean transB, int m, int n, int k,
            MemorySegment a, long aOff, int lda, MemorySegment b, long bOff, int ldb,
            MemorySegment c, long cOff, int ldc, int elementBytes) {
        if (m < 0 || n < 0 || k < 0) {
            throw new IllegalArgumentException("gemm sizes must be >= 0, got m=" + m + " n=" + n + " k=" + k);
        }
        checkMatrix("A", a, aOff, lda, transA ? k : m, transA ? m : k, n > 0, elementBytes);
        checkMatrix("B", b, bOff, ldb, transB ? n : k, transB ? k : n, m > 0, elementBytes);
        checkMatrix("C", c, cOff, ldc, m, n, true, elementBytes);
    }

    /** Checks a stored {@code rows x cols} matrix that is read or written when {@code used} is true. */
    private static void checkMatrix(String name, MemorySegment s, long off, int ld, int rows, int cols,
            boolean used, int elementBytes) {
        if (!used || rows == 0 || cols == 0) {
            return;
        }
        if (s == null) {
            throw new IllegalArgumentException("gemm " + name + " is null but is a " + rows + "x" + cols + " matrix");
        }
        if (ld < cols) {
            throw new IllegalArgumentException("gemm ld" + name.toLowerCase() + "=" + ld + " must be >= the "
                    + cols + " columns of the stored " + name);
        }
        long end = off + (long) (rows - 1) * ld + cols;
        if (off < 0 || end * elementBytes > s.byteSize()) {
            throw new IllegalArgumentException("gemm " + name + " (offset " + off + ", " + rows + "x" + cols
                    + ", ld " + ld + ") needs " + end * elementBytes + " bytes but its segment has " + s.byteSize());
        }
    }

    /** Scales C by beta in place; with {@code beta == 0} it writes zeros without reading C. */
    private static void scale(int m, int n, float beta, MemorySegment c, long off, int ldc) {
        for (int i = 0; i < m; i++) {
            long row = off + (long) i * ldc;
            for (int j = 0; j < n; j++) {
                float v = beta == 0f ? 0f : beta * c.getAtIndex(ValueLayout.JAVA_FLOAT, row + j);
                c.setAtIndex(ValueLayout.JAVA_FLOAT, row + j, v);
            }
        }
    }

    /** Scales C by beta in place; with {@code beta == 0} it writes zeros without reading C. */
    private static void scale(int m, int n, double beta, MemorySegment c, long off, int ldc) {
        for (int i = 0; i < m; i++) {
            long row = off + (long) i * ldc;
            for (int j = 0; j < n; j++) {
                double v = beta == 0 ? 0 : beta * c.getAtIndex(ValueLayout.JAVA_DOUBLE, row + j);
                c.setAtIndex(ValueLayout.JAVA_DOUBLE, row + j, v);
            }
        }
    }
}
