package io.tensorbus.tensor.impl;

import java.lang.foreign.MemorySegment;

/** A {@link GemmWorker} for float64: the operands of one {@code dgemm} call and this thread's buffers. */
final class DgemmWorker extends GemmWorker {
    /** Depth of a packed block: an A micro-panel ({@code 6 x 256} doubles, 6 KiB) stays in L1. */
    private static final int KC = 256;
    /** Columns of a packed block: {@code 256 x 480} doubles, 480 KiB, stay in L2. */
    private static final int NC = 512 / DgemmKernel.NR * DgemmKernel.NR;

    private final boolean transA;
    private final boolean transB;
    private final double alpha;
    private final double beta;
    private final MemorySegment a;
    private final long aOff;
    private final int lda;
    private final MemorySegment b;
    private final long bOff;
    private final int ldb;
    private final MemorySegment c;
    private final long cOff;
    private final int ldc;
    private final double[] packedA;
    private final double[] packedB;
    private final double[] spill = new double[DgemmKernel.MR * DgemmKernel.NR];

    DgemmWorker(boolean transA, boolean transB, int n, int k, double alpha, MemorySegment a, long aOff, int lda,
            MemorySegment b, long bOff, int ldb, double beta, MemorySegment c, long cOff, int ldc) {
        super(DgemmKernel.MR, DgemmKernel.NR, KC, NC);
        this.transA = transA;
        this.transB = transB;
        this.alpha = alpha;
        this.beta = beta;
        this.a = a;
        this.aOff = aOff;
        this.lda = lda;
        this.b = b;
        this.bOff = bOff;
        this.ldb = ldb;
        this.c = c;
        this.cOff = cOff;
        this.ldc = ldc;
        int kc = Math.min(k, KC);
        int nc = Math.min(GemmDriver.ceilDiv(n, nr) * nr, NC);
        this.packedA = new double[kc * mr];
        this.packedB = new double[kc * nc];
    }

    @Override
    void packB(int p0, int kc, int j0, int nc) {
        DgemmPack.packB(b, bOff, ldb, transB, p0, kc, j0, nc, packedB);
    }

    @Override
    void packA(int i0, int rows, int p0, int kc) {
        DgemmPack.packA(a, aOff, lda, transA, i0, rows, p0, kc, packedA);
    }

    @Override
    void tile(int i0, int rows, int j0, int cols, int panel, int kc, boolean first) {
        DgemmKernel.tile(packedA, packedB, panel * kc * nr, kc, c, cOff + (long) i0 * ldc + j0, ldc, rows, cols,
                alpha, first ? beta : 1.0, spill);
    }
}
