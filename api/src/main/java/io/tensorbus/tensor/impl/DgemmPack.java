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
 * Copies float64 blocks of op(A) and op(B) into the zero-padded micro-panel layouts that
 * {@link DgemmKernel} reads (the layouts of {@link SgemmPack}, with doubles). Rows of B are copied with
 * vectors; transposed operands element by element.
 */
final class DgemmPack {
    private static final ValueLayout.OfDouble D = ValueLayout.JAVA_DOUBLE;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final long BYTES = Double.BYTES;

    private DgemmPack() {
    }

    /** Doubles one packed A micro-panel of depth {@code kc} takes. */
    static int aPanelSize(int kc) {
        return kc * MR;
    }

    /**
     * Packs op(A) rows {@code [i0, i0+rows)}, columns {@code [p0, p0+kc)} as micro-panels of MR rows, each
     * {@link #aPanelSize} doubles from the last, starting at {@code dst[at]}: {@code dst[p*MR + r]} in each.
     */
    static void packA(GemmMatrix a, int i0, int rows, int p0, int kc, double[] dst, int at) {
        int stride = aPanelSize(kc);
        long step = a.trans() ? a.ld() : 1;
        for (int ir = 0; ir < rows; ir += MR, at += stride) {
            int panelRows = Math.min(MR, rows - ir);
            if (panelRows < MR) {
                Arrays.fill(dst, at, at + kc * MR, 0.0);
            }
            for (int r = 0; r < panelRows; r++) {
                long src = a.index(i0 + ir + r, p0);
                for (int p = 0; p < kc; p++) {
                    dst[at + p * MR + r] = a.seg().getAtIndex(D, src + p * step);
                }
            }
        }
    }

    /**
     * Packs op(B) rows {@code [p0, p0+kc)}, columns {@code [j0, j0+nc)}: panel {@code q} starts at
     * {@code q*kc*NR} and holds {@code kc} rows of {@code NR} columns, zero beyond the matrix.
     */
    static void packB(GemmMatrix b, int p0, int kc, int j0, int nc, double[] dst) {
        for (int q = 0; q * NR < nc; q++) {
            int cols = Math.min(NR, nc - q * NR);
            int base = q * kc * NR;
            long src = b.index(p0, j0 + q * NR);
            if (b.trans()) {
                packColumns(b.seg(), src, b.ld(), kc, cols, dst, base);
            } else {
                packRows(b.seg(), src, b.ld(), kc, cols, dst, base);
            }
        }
    }

    /** Copies {@code kc} rows of {@code cols} contiguous doubles, {@code ld} apart, into rows of NR. */
    private static void packRows(MemorySegment b, long src, int ld, int kc, int cols, double[] dst, int base) {
        for (int p = 0; p < kc; p++) {
            long at = (src + (long) p * ld) * BYTES;
            int to = base + p * NR;
            for (int j = 0; j < NR; j += LANES) {
                DoubleVector v = j + LANES <= cols
                        ? DoubleVector.fromMemorySegment(SPECIES, b, at + j * BYTES, ORDER)
                        : DoubleVector.fromMemorySegment(SPECIES, b, at + j * BYTES, ORDER, SPECIES.indexInRange(j, cols));
                v.intoArray(dst, to + j);
            }
        }
    }

    /** op(B) = B^T: copies {@code cols} rows of {@code kc} contiguous doubles, {@code ld} apart, as columns. */
    private static void packColumns(MemorySegment b, long src, int ld, int kc, int cols, double[] dst, int base) {
        if (cols < NR) {
            Arrays.fill(dst, base, base + kc * NR, 0.0);
        }
        for (int j = 0; j < cols; j++) {
            long row = src + (long) j * ld;
            for (int p = 0; p < kc; p++) {
                dst[base + p * NR + j] = b.getAtIndex(D, row + p);
            }
        }
    }
}
