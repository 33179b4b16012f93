package io.tensorbus.internal.tensor;

import static io.tensorbus.internal.tensor.SgemmKernel.LANES;
import static io.tensorbus.internal.tensor.SgemmKernel.MR;
import static io.tensorbus.internal.tensor.SgemmKernel.NR;
import static io.tensorbus.internal.tensor.SgemmKernel.SPECIES;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;

/**
 * Copies float32 blocks of op(A) and op(B) from row-major memory into the contiguous, zero-padded
 * micro-panel layouts that {@link SgemmKernel} reads: A as depth-major groups of {@link SgemmKernel#MR}
 * rows, B as panels of {@link SgemmKernel#NR} columns, row after row. Transposed operands go through
 * {@link FloatTranspose} a square block at a time.
 */
final class SgemmPack {
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final long BYTES = Float.BYTES;

    private SgemmPack() {
    }

    /** Floats one packed A micro-panel of depth {@code kc} takes: whole-vector stores may run one past. */
    static int aPanelSize(int kc) {
        return kc * MR + LANES;
    }

    /**
     * Packs op(A) rows {@code [i0, i0+rows)}, columns {@code [p0, p0+kc)} as micro-panels of MR rows, each
     * {@link #aPanelSize} floats from the last, starting at {@code dst[at]}: {@code dst[p*MR + r]} in each.
     */
    static void packA(GemmMatrix a, int i0, int rows, int p0, int kc, float[] dst, int at) {
        int stride = aPanelSize(kc);
        if (a.trans() && LANES >= MR) {
            packAFromColumns(a.seg(), a.index(i0, p0), a.ld(), rows, kc, dst, at, stride);
            return;
        }
        long step = a.trans() ? a.ld() : 1;
        for (int ir = 0; ir < rows; ir += MR, at += stride) {
            int panelRows = Math.min(MR, rows - ir);
            if (panelRows < MR) {
                Arrays.fill(dst, at, at + kc * MR, 0f);
            }
            for (int r = 0; r < panelRows; r++) {
                long src = a.index(i0 + ir + r, p0);
                for (int p = 0; p < kc; p++) {
                    dst[at + p * MR + r] = a.seg().getAtIndex(F, src + p * step);
                }
            }
        }
    }

    /**
     * op(A) = A^T: a depth step is a contiguous run of the stored row, read a row at a time; each
     * micro-panel's share of it is one masked load, and the whole-vector store spills zeros into the next
     * step of the same panel (overwritten next) or into the panel's padding.
     */
    private static void packAFromColumns(MemorySegment a, long src, int lda, int rows, int kc, float[] dst,
            int at, int stride) {
        int panels = (rows + MR - 1) / MR;
        for (int p = 0; p < kc; p++) {
            long row = (src + (long) p * lda) * BYTES;
            for (int g = 0; g < panels; g++) {
                VectorMask<Float> m = SPECIES.indexInRange(0, Math.min(MR, rows - g * MR));
                FloatVector.fromMemorySegment(SPECIES, a, row + g * MR * BYTES, ORDER, m)
                        .intoArray(dst, at + g * stride + p * MR);
            }
        }
    }

    /**
     * Packs op(B) rows {@code [p0, p0+kc)}, columns {@code [j0, j0+nc)}: panel {@code q} starts at
     * {@code q*kc*NR} and holds {@code kc} rows of {@code NR} columns, zero beyond the matrix.
     * {@code block} holds {@code 2 * FloatTranspose.BLOCK} ints of scratch when B is transposed.
     */
    static void packB(GemmMatrix b, int p0, int kc, int j0, int nc, float[] dst, int[] block) {
        if (!b.trans()) {
            packRows(b.seg(), b.index(p0, j0), b.ld(), kc, nc, dst);
            return;
        }
        for (int q = 0; q * NR < nc; q++) {
            int cols = Math.min(NR, nc - q * NR);
            packColumns(b.seg(), b.index(p0, j0 + q * NR), b.ld(), kc, cols, dst, q * kc * NR, block);
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
            long at = (src + (long) p * ld) * BYTES;
            int to = p * NR;
            for (int q = 0; q < fullPanels; q++, at += NR * BYTES, to += panelSize) {
                FloatVector.fromMemorySegment(SPECIES, b, at, ORDER).intoArray(dst, to);
                FloatVector.fromMemorySegment(SPECIES, b, at + LANES * BYTES, ORDER).intoArray(dst, to + LANES);
                FloatVector.fromMemorySegment(SPECIES, b, at + 2 * LANES * BYTES, ORDER).intoArray(dst, to + 2 * LANES);
            }
            if (rest > 0) {
                for (int j = 0; j < NR; j += LANES) {
                    FloatVector.fromMemorySegment(SPECIES, b, at + j * BYTES, ORDER, SPECIES.indexInRange(j, rest))
                            .intoArray(dst, to + j);
                }
            }
        }
    }

    /**
     * op(B) = B^T: copies {@code cols} rows of {@code kc} contiguous floats, {@code ld} apart, into one panel
     * as its columns, a square block at a time, and the last {@code kc % LANES} depth steps one by one.
     */
    private static void packColumns(MemorySegment b, long src, int ld, int kc, int cols, float[] dst, int base,
            int[] block) {
        if (cols < NR) {
            Arrays.fill(dst, base, base + kc * NR, 0f);
        }
        int kv = kc - kc % LANES;
        for (int g = 0; g < cols; g += LANES) {
            int valid = Math.min(LANES, cols - g);
            for (int p = 0; p < kv; p += LANES) {
                transposeBlock(b, src + (long) g * ld + p, ld, valid, block, dst, base + p * NR + g);
            }
        }
        for (int j = 0; j < cols; j++) {
            long row = src + (long) j * ld;
            for (int p = kv; p < kc; p++) {
                dst[base + p * NR + j] = b.getAtIndex(F, row + p);
            }
        }
    }

    /**
     * Reads {@code valid} rows of LANES floats ({@code ld} apart; the other rows count as zero) and writes
     * the block's columns as LANES rows of {@code dst}, {@code NR} apart.
     */
    private static void transposeBlock(MemorySegment b, long src, int ld, int valid, int[] block, float[] dst,
            int to) {
        if (valid == LANES && LANES == 16) {
            FloatTranspose.transpose16(b, src * BYTES, ld * BYTES, dst, to, NR);
            return;
        }
        for (int t = 0; t < valid; t++) {
            IntVector.fromMemorySegment(FloatTranspose.INTS, b, (src + (long) t * ld) * BYTES, ORDER)
                    .intoArray(block, t * LANES);
        }
        if (valid < LANES) {
            Arrays.fill(block, valid * LANES, LANES * LANES, 0);
        }
        FloatTranspose.transpose(block);
        int at = FloatTranspose.resultOffset();
        for (int p = 0; p < LANES; p++) {
            IntVector.fromArray(FloatTranspose.INTS, block, at + p * LANES).reinterpretAsFloats()
                    .intoArray(dst, to + p * NR);
        }
    }
}
