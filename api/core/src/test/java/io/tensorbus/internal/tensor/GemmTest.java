package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link Gemm} against a triple loop in double precision: every transpose combination, sizes at and
 * around the block and micro-tile edges, alpha and beta, offsets and leading dimensions wider than a row,
 * a NaN-filled C with beta = 0, and the split over two threads.
 */
class GemmTest {
    private static final float SENTINEL = -12345f;
    private final Random random = new Random(42);
    private final Arena arena = Arena.ofAuto();
    private final int threadsBefore = Threads.get();

    @AfterEach
    void restoreThreads() {
        Threads.set(threadsBefore);
    }

    /** One stored matrix: a segment sized exactly to its last element, so any over-read fails. */
    private record Matrix(MemorySegment seg, long off, int rows, int cols, int ld, boolean isFloat) {
        double get(int r, int c) {
            long i = off + (long) r * ld + c;
            return isFloat ? seg.getAtIndex(ValueLayout.JAVA_FLOAT, i) : seg.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
        }

        void set(int r, int c, double v) {
            long i = off + (long) r * ld + c;
            if (isFloat) {
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
            } else {
                seg.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
            }
        }

        /** Element {@code (r, c)} of op(this), the matrix as the product sees it. */
        double op(boolean trans, int r, int c) {
            return trans ? get(c, r) : get(r, c);
        }

        /** Every element of the segment outside the matrix, as a flat copy for "left alone" checks. */
        double[] all() {
            long n = seg.byteSize() / (isFloat ? 4 : 8);
            double[] out = new double[(int) n];
            for (int i = 0; i < n; i++) {
                out[i] = isFloat ? seg.getAtIndex(ValueLayout.JAVA_FLOAT, i)
                        : seg.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
            }
            return out;
        }
    }

    private Matrix matrix(int rows, int cols, int ldPad, long off, boolean isFloat, double fill) {
        int ld = Math.max(1, cols + ldPad);
        long elements = rows == 0 || cols == 0 ? off : off + (long) (rows - 1) * ld + cols;
        MemorySegment seg = arena.allocate(Math.max(1, elements) * (isFloat ? 4 : 8), 64);
        Matrix m = new Matrix(seg, off, rows, cols, ld, isFloat);
        for (long i = 0; i < seg.byteSize() / (isFloat ? 4 : 8); i++) {
            if (isFloat) {
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, SENTINEL);
            } else {
                seg.setAtIndex(ValueLayout.JAVA_DOUBLE, i, SENTINEL);
            }
        }
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                m.set(r, c, Double.isNaN(fill) ? Double.NaN : random.nextGaussian());
            }
        }
        return m;
    }

    /** A product to run: sizes, transposes, scalars and the layout of each operand. */
    private record Case(boolean ta, boolean tb, int m, int n, int k, double alpha, double beta, int pad, long off) {
    }

    /**
     * Runs one case and checks {@code checks} entries of C (all of them when {@code checks <= 0}) against the
     * reference, and that nothing outside C's window changed.
     */
    private void check(Case t, boolean isFloat, boolean nanC, int checks) {
        Matrix a = matrix(t.ta ? t.k : t.m, t.ta ? t.m : t.k, t.pad, t.off, isFloat, 0);
        Matrix b = matrix(t.tb ? t.n : t.k, t.tb ? t.k : t.n, t.pad + 1, t.off + 3, isFloat, 0);
        Matrix c = matrix(t.m, t.n, t.pad + 2, t.off + 5, isFloat, nanC ? Double.NaN : 0);
        double[] before = c.all();
        if (isFloat) {
            Gemm.sgemm(t.ta, t.tb, t.m, t.n, t.k, (float) t.alpha, a.seg, a.off, a.ld, b.seg, b.off, b.ld,
                    (float) t.beta, c.seg, c.off, c.ld);
        } else {
            Gemm.dgemm(t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.seg, a.off, a.ld, b.seg, b.off, b.ld, t.beta, c.seg,
                    c.off, c.ld);
        }
        double eps = isFloat ? 1.2e-7 : 2.3e-16;
        int total = t.m * t.n;
        for (int s = 0; s < (checks <= 0 ? total : Math.min(checks, total)); s++) {
            int idx = checks <= 0 ? s : random.nextInt(total);
            int i = idx / t.n;
            int j = idx % t.n;
            double sum = 0;
            double bound = 0;
            for (int p = 0; p < t.k; p++) {
                double x = a.op(t.ta, i, p) * b.op(t.tb, p, j);
                sum += x;
                bound += Math.abs(x);
            }
            double old = before[(int) (c.off + (long) i * c.ld + j)];
            double kept = t.beta == 0 ? 0 : t.beta * old;
            double expected = t.alpha * sum + kept;
            double tol = 4 * eps * (t.k + 2) * (Math.abs(t.alpha) * bound + Math.abs(kept)) + 1e-30;
            double got = c.get(i, j);
            assertTrue(Math.abs(got - expected) <= tol, () -> t + " float=" + isFloat + " C[" + i + "," + j + "]="
                    + got + " expected " + expected + " (tolerance " + tol + ")");
        }
        double[] after = c.all();
        for (int e = 0; e < after.length; e++) {
            long rel = e - c.off;
            boolean inside = rel >= 0 && rel / c.ld < t.m && rel % c.ld < t.n;
            if (!inside) {
                assertEquals(before[e], after[e], t + ": element " + e + " outside C changed");
            }
        }
    }

    private Case randomCase(boolean ta, boolean tb, int max) {
        int[] special = {1, 2, 5, 6, 7, 15, 16, 17, 31, 47, 48, 49, 97};
        int m = random.nextInt(3) == 0 ? special[random.nextInt(special.length)] : 1 + random.nextInt(max);
        int n = random.nextInt(3) == 0 ? special[random.nextInt(special.length)] : 1 + random.nextInt(max);
        int k = random.nextInt(3) == 0 ? special[random.nextInt(special.length)] : 1 + random.nextInt(max);
        double[] scalars = {1, -1, 0.5, 2.5, 0};
        double alpha = scalars[random.nextInt(4)];
        double beta = scalars[random.nextInt(scalars.length)];
        return new Case(ta, tb, m, n, k, alpha, beta, random.nextInt(3) * 7, random.nextInt(4) * 5);
    }

    @Test
    void sgemmMatchesReferenceForAllTransposes() {
        for (int trial = 0; trial < 40; trial++) {
            for (int tr = 0; tr < 4; tr++) {
                check(randomCase((tr & 1) != 0, (tr & 2) != 0, 70), true, false, 0);
            }
        }
    }

    @Test
    void dgemmMatchesReferenceForAllTransposes() {
        for (int trial = 0; trial < 40; trial++) {
            for (int tr = 0; tr < 4; tr++) {
                check(randomCase((tr & 1) != 0, (tr & 2) != 0, 70), false, false, 0);
            }
        }
    }

    @Test
    void matchesReferenceAcrossCacheBlockEdges() {
        // Depth past one block (256), columns past one block (480 floats, 240 doubles), rows past a
        // packed A block (96), and op(A) too large to keep packed whole.
        int[][] shapes = {{97, 481, 257}, {200, 1000, 513}, {6, 2000, 300}, {1300, 500, 1300}, {13, 49, 1025}};
        for (int[] s : shapes) {
            for (int tr = 0; tr < 4; tr++) {
                Case t = new Case((tr & 1) != 0, (tr & 2) != 0, s[0], s[1], s[2], 1.5, 0.5, 3, 1);
                check(t, true, false, 300);
                check(t, false, false, 300);
            }
        }
    }

    @Test
    void wideDepthProductsWithBTransposedMatchReference() {
        // The dot-product kernel's shapes (few rows, long depth): row counts around its 4-row blocks, depths
        // around its 1024-float blocks and vector tails.
        int[][] shapes = {{10, 25, 36864}, {20, 250, 4096}, {1, 1, 1024}, {5, 3, 1025}, {32, 7, 3001}, {3, 300, 2048}};
        for (int[] s : shapes) {
            check(new Case(false, true, s[0], s[1], s[2], 1.5, 0.5, 3, 1), true, false, 200);
            check(new Case(false, true, s[0], s[1], s[2], 1, 0, 0, 0), true, true, 200);
        }
    }

    @Test
    void betaZeroOverwritesNanFilledOutput() {
        for (int tr = 0; tr < 4; tr++) {
            for (int[] s : new int[][] {{7, 50, 9}, {64, 600, 300}, {1, 1, 1}}) {
                Case t = new Case((tr & 1) != 0, (tr & 2) != 0, s[0], s[1], s[2], 1, 0, 2, 3);
                check(t, true, true, 0);
                check(t, false, true, 0);
            }
        }
    }

    @Test
    void zeroDepthOrAlphaScalesOutputByBeta() {
        for (boolean isFloat : new boolean[] {true, false}) {
            check(new Case(false, false, 9, 33, 0, 1, 0.5, 1, 2), isFloat, false, 0);
            check(new Case(true, true, 9, 33, 0, 1, 0, 1, 2), isFloat, true, 0);
            check(new Case(false, true, 9, 33, 12, 0, 2, 1, 2), isFloat, false, 0);
        }
    }

    @Test
    void emptyOutputIsANoOp() {
        for (boolean isFloat : new boolean[] {true, false}) {
            check(new Case(false, false, 0, 5, 7, 1, 0, 0, 0), isFloat, false, 0);
            check(new Case(true, false, 5, 0, 7, 1, 1, 0, 0), isFloat, false, 0);
            check(new Case(false, true, 0, 0, 0, 1, 1, 0, 0), isFloat, false, 0);
        }
    }

    @Test
    void splitOverTwoThreadsMatchesReference() {
        Threads.set(2);
        int[][] shapes = {{64, 3136, 576}, {576, 3136, 64}, {64, 576, 3136}, {300, 301, 302}, {7, 5000, 20}};
        for (int[] s : shapes) {
            for (int tr = 0; tr < 4; tr++) {
                Case t = new Case((tr & 1) != 0, (tr & 2) != 0, s[0], s[1], s[2], 1, 1, 0, 0);
                check(t, true, false, 200);
                check(t, false, false, 200);
            }
        }
    }

    @Test
    void rejectsLeadingDimensionShorterThanRow() {
        MemorySegment s = arena.allocate(4096, 64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.sgemm(false, false, 4, 4, 8, 1f, s, 0, 7, s, 0, 4, 0f, s, 0, 4));
        assertTrue(e.getMessage().contains("lda=7"), e.getMessage());
    }

    @Test
    void rejectsOperandOutsideItsSegment() {
        MemorySegment small = arena.allocate(16 * 4, 64);
        MemorySegment big = arena.allocate(4096, 64);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.sgemm(false, false, 4, 4, 8, 1f, small, 0, 8, big, 0, 4, 0f, big, 0, 4));
        assertTrue(e.getMessage().contains("gemm A"), e.getMessage());
    }

    @Test
    void rejectsNegativeSizes() {
        MemorySegment s = arena.allocate(64, 64);
        assertThrows(IllegalArgumentException.class,
                () -> Gemm.dgemm(false, false, -1, 1, 1, 1, s, 0, 1, s, 0, 1, 0, s, 0, 1));
    }
}
