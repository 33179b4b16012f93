package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.CpuInfo;

/** A {@link GemmWorker} for float32: the operands of one {@code sgemm} call and this thread's buffers. */
final class SgemmWorker extends GemmWorker {
    /**
     * Rows of a packed A block when op(A) is not kept whole: 48 micro-panels, so that a transposed A is
     * read in runs of 288 floats per stored row rather than a few cache lines.
     */
    private static final int MC = 48 * SgemmKernel.MR;
    /** Depth of a packed block: an A micro-panel ({@code 6 x 256} floats, 6 KiB) stays in L1. */
    private static final int KC = 256;
    /**
     * Columns of a packed B block, sized so that the block ({@code KC x NC} floats) fills half of this CPU's L2:
     * 480 columns (480 KiB) with the 1 MiB of an AMD EPYC core, 1,008 with the 2 MiB of a recent Xeon's.
     */
    private static final int NC = columnsFor(CpuInfo.current().l2Bytes());
    /** Most floats (6 MiB) of packed A kept, to pack op(A) once rather than once per column block. */
    private static final int KEEP_A = 3 << 19;

    private final GemmMatrix a;
    private final GemmMatrix b;
    private final GemmMatrix c;
    private final float alpha;
    private final float beta;
    private final float[] packedB;
    private final float[] spill;
    private final int[] block;
    private float[] packedA;

    /** A worker for {@code C = alpha * op(A) * op(B) + beta * C} with C {@code m x n} and depth {@code k}. */
    SgemmWorker(GemmMatrix a, GemmMatrix b, GemmMatrix c, int n, int k, float alpha, float beta) {
        super(SgemmKernel.MR, SgemmKernel.NR, MC, KC, NC);
        this.a = a;
        this.b = b;
        this.c = c;
        this.alpha = alpha;
        this.beta = beta;
        int nc = Math.min(GemmDriver.ceilDiv(n, nr) * nr, NC);
        this.packedB = GemmBuffers.floats(1, Math.min(k, KC) * nc);
        this.spill = GemmBuffers.floats(2, mr * nr);
        this.block = b.trans() ? GemmBuffers.ints(2 * FloatTranspose.BLOCK) : null;
    }

    /** The B block width for an L2 of {@code l2Bytes} (1 MiB when unknown), a multiple of the tile width. */
    static int columnsFor(long l2Bytes) {
        long l2 = l2Bytes > 0 ? l2Bytes : 1L << 20;
        long columns = Math.clamp(l2 / 2 / ((long) KC * Float.BYTES), 256, 2048);
        return (int) (columns / SgemmKernel.NR * SgemmKernel.NR);
    }

    @Override
    int aPanelSize(int kc) {
        return SgemmPack.aPanelSize(kc);
    }

    @Override
    boolean reserveA(long elements) {
        if (elements > Math.max(KEEP_A, (long) aPanelSize(KC) * (MC / mr))) {
            return false;
        }
        packedA = GemmBuffers.floats(0, (int) elements);
        return true;
    }

    @Override
    void packB(int p0, int kc, int j0, int nc) {
        SgemmPack.packB(b, p0, kc, j0, nc, packedB, block);
    }

    @Override
    void packA(int i0, int rows, int p0, int kc, int at) {
        SgemmPack.packA(a, i0, rows, p0, kc, packedA, at);
    }

    @Override
    void tile(int at, int i0, int rows, int j0, int cols, int panel, int kc, boolean first) {
        SgemmKernel.tile(packedA, at, packedB, panel * kc * nr, kc, c.seg(), c.index(i0, j0), c.ld(), rows, cols,
                alpha, first ? beta : 1f, spill);
    }
}
