package io.tensorbus.tensor.impl;

import static io.tensorbus.tensor.impl.DgemmKernel.LANES;
import static io.tensorbus.tensor.impl.DgemmKernel.MR;
import static io.tensorbus.tensor.impl.DgemmKernel.NR;
import static io.tensorbus.tensor.impl.DgemmKernel.SPECIES;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.DoubleVector;

/**
 * Copies float64 blocks of op(A) and op(B) from row-major memory into the contiguous, zero-padded
 * micro-panel layouts that {@link DgemmKernel} reads: A as depth-major groups of {@link DgemmKernel#MR}
 * rows, B as panels of {@link DgemmKernel#NR} columns, row after row.
 */
final class DgemmPack {
    private static final ValueLayout.OfDouble F = ValueLayout.JAVA_DOUBLE;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private DgemmPack() {
    }

    /** Packs op(A) rows {@code [i0, i0+rows)}, columns {@code [p0, p0+kc)} into {@code dst[p*MR + r]}. */
    static void packA(MemorySegment a, long off, int lda, boolean trans, int i0, int rows, int p0, int kc,
            double[] dst) {
        if (rows < MR) {
            Arrays.fill(dst, 0, kc * MR, 0.0);
        }
        if (trans) {
            for (int p = 0; p < kc; p++) {
                long src = off + (long) (p0 + p) * lda + i0;
                for (int r = 0; r < rows; r++) {
                    dst[p * MR + r] = a.getAtIndex(F, src + r);
                }
            }
        } else {
            for (int r = 0; r < rows; r++) {
                long src = off + (long) (i0 + r) * lda + p0;
                for (int p = 0; p < kc; p++) {
                    dst[p * MR + r] = a.getAtIndex(F, src + p);
                }
            }
        }
    }

    /**
     * Packs op(B) rows {@code [p0, p0+kc)}, columns {@code [j0, j0+nc)}: panel {@code q} starts at
     * {@code q*kc*NR} and holds {@code kc} rows of {@code NR} columns, zero beyond the matrix.
     */
    static void packB(MemorySegment b, long off, int ldb, boolean trans, int p0, int kc, int j0, int nc,
            double[] dst) {
        for (int q = 0; q * NR < nc; q++) {
            int cols = Math.min(NR, nc - q * NR);
            int base = q * kc * NR;
            if (trans) {
                packTransposedPanel(b, off + (long) (j0 + q * NR) * ldb + p0, ldb, kc, cols, dst, base);
            } else {
                packPanel(b, off + (long) p0 * ldb + j0 + q * NR, ldb, kc, cols, dst, base);
            }
        }
    }

    /** Copies {@code kc} rows of {@code cols} contiguous doubles, {@code ld} apart, into rows of NR. */
    private static void packPanel(MemorySegment b, long src, int ld, int kc, int cols, double[] dst, int base) {
        if (cols == NR) {
            for (int p = 0; p < kc; p++) {
                long at = (src + (long) p * ld) * Double.BYTES;
                int to = base + p * NR;
                DoubleVector.fromMemorySegment(SPECIES, b, at, ORDER).intoArray(dst, to);
                DoubleVector.fromMemorySegment(SPECIES, b, at + LANES * Double.BYTES, ORDER).intoArray(dst, to + LANES);
                DoubleVector.fromMemorySegment(SPECIES, b, at + 2 * LANES * Double.BYTES, ORDER)
                        .intoArray(dst, to + 2 * LANES);
            }
            return;
        }
        for (int p = 0; p < kc; p++) {
            long at = (src + (long) p * ld) * Double.BYTES;
            int to = base + p * NR;
            for (int j = 0; j < NR; j += LANES) {
                DoubleVector.fromMemorySegment(SPECIES, b, at + j * Double.BYTES, ORDER, SPECIES.indexInRange(j, cols))
                        .intoArray(dst, to + j);
            }
        }
    }

    /** Copies {@code cols} rows of {@code kc} contiguous doubles, {@code ld} apart, as columns of NR. */
    private static void packTransposedPanel(MemorySegment b, long src, int ld, int kc, int cols, double[] dst,
            int base) {
        if (cols < NR) {
            Arrays.fill(dst, base, base + kc * NR, 0.0);
        }
        for (int j = 0; j < cols; j++) {
            long row = src + (long) j * ld;
            for (int p = 0; p < kc; p++) {
                dst[base + p * NR + j] = b.getAtIndex(F, row + p);
            }
        }
    }
}
