package io.tensorbus.tensor.impl;

import static io.tensorbus.tensor.impl.SgemmKernel.LANES;
import static io.tensorbus.tensor.impl.SgemmKernel.MR;
import static io.tensorbus.tensor.impl.SgemmKernel.NR;
import static io.tensorbus.tensor.impl.SgemmKernel.SPECIES;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;

/**
 * Copies float32 blocks of op(A) and op(B) from row-major memory into the contiguous, zero-padded
 * micro-panel layouts that {@link SgemmKernel} reads: A as depth-major groups of {@link SgemmKernel#MR}
 * rows, B as panels of {@link SgemmKernel#NR} columns, row after row.
 */
final class SgemmPack {
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private SgemmPack() {
    }

    /** Packs op(A) rows {@code [i0, i0+rows)}, columns {@code [p0, p0+kc)} into {@code dst[p*MR + r]}. */
    static void packA(MemorySegment a, long off, int lda, boolean trans, int i0, int rows, int p0, int kc,
            float[] dst) {
        if (rows < MR) {
            Arrays.fill(dst, 0, kc * MR, 0f);
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
            float[] dst) {
        if (!trans) {
            packRows(b, off + (long) p0 * ldb + j0, ldb, kc, nc, dst);
            return;
        }
        for (int q = 0; q * NR < nc; q++) {
            int cols = Math.min(NR, nc - q * NR);
            packTransposedPanel(b, off + (long) (j0 + q * NR) * ldb + p0, ldb, kc, cols, dst, q * kc * NR);
        }
    }

    /**
     * Copies {@code kc} rows of {@code nc} contiguous floats, {@code ld} apart, cutting each row into the
     * panels; a row at a time so that the reads stream through memory.
     */
    private static void packRows(MemorySegment b, long src, int ld, int kc, int nc, float[] dst) {
        int fullPanels = nc / NR;
        int rest = nc - fullPanels * NR;
        int panelSize = kc * NR;
        for (int p = 0; p < kc; p++) {
            long at = (src + (long) p * ld) * Float.BYTES;
            int to = p * NR;
            for (int q = 0; q < fullPanels; q++, at += NR * Float.BYTES, to += panelSize) {
                FloatVector.fromMemorySegment(SPECIES, b, at, ORDER).intoArray(dst, to);
                FloatVector.fromMemorySegment(SPECIES, b, at + LANES * Float.BYTES, ORDER).intoArray(dst, to + LANES);
                FloatVector.fromMemorySegment(SPECIES, b, at + 2 * LANES * Float.BYTES, ORDER)
                        .intoArray(dst, to + 2 * LANES);
            }
            if (rest > 0) {
                for (int j = 0; j < NR; j += LANES) {
                    FloatVector.fromMemorySegment(SPECIES, b, at + j * Float.BYTES, ORDER,
                            SPECIES.indexInRange(j, rest)).intoArray(dst, to + j);
                }
            }
        }
    }

    /** Copies {@code cols} rows of {@code kc} contiguous floats, {@code ld} apart, as columns of NR. */
    private static void packTransposedPanel(MemorySegment b, long src, int ld, int kc, int cols, float[] dst,
            int base) {
        if (cols < NR) {
            Arrays.fill(dst, base, base + kc * NR, 0f);
        }
        for (int j = 0; j < cols; j++) {
            long row = src + (long) j * ld;
            for (int p = 0; p < kc; p++) {
                dst[base + p * NR + j] = b.getAtIndex(F, row + p);
            }
        }
    }
}
