package io.tensorbus.tensor.impl;

/** A {@link GemmWorker} for float64: the operands of one {@code dgemm} call and this thread's buffers. */
final class DgemmWorker extends GemmWorker {
    /** Rows of a packed A block when op(A) is not kept whole: 48 micro-panels. */
    private static final int MC = 48 * DgemmKernel.MR;
    /** Depth of a packed block: an A micro-panel ({@code 6 x 256} doubles, 12 KiB) stays in L1. */
    private static final int KC = 256;
    /** Columns of a packed B block: {@code 256 x 240} doubles, 480 KiB, stay in L2 (1 MiB here). */
    private static final int NC = 256 / DgemmKernel.NR * DgemmKernel.NR;
    /** Most doubles (6 MiB) of packed A kept, to pack op(A) once rather than once per column block. */
    private static final int KEEP_A = 3 << 18;

    private final GemmMatrix a;
    private final GemmMatrix b;
    private final GemmMatrix c;
    private final double alpha;
    private final double beta;
    private final double[] packedB;
    private final double[] spill;
    private double[] packedA;

    /** A worker for {@code C = alpha * op(A) * op(B) + beta * C} with C {@code m x n} and depth {@code k}. */
    DgemmWorker(GemmMatrix a, GemmMatrix b, GemmMatrix c, int n, int k, double alpha, double beta) {
        super(DgemmKernel.MR, DgemmKernel.NR, MC, KC, NC);
        this.a = a;
        this.b = b;
        this.c = c;
        this.alpha = alpha;
        this.beta = beta;
        int nc = Math.min(GemmDriver.ceilDiv(n, nr) * nr, NC);
        this.packedB = GemmBuffers.doubles(1, Math.min(k, KC) * nc);
        this.spill = GemmBuffers.doubles(2, mr * nr);
    }

    @Override
    int aPanelSize(int kc) {
        return DgemmPack.aPanelSize(kc);
    }

    @Override
    boolean reserveA(long elements) {
        if (elements > Math.max(KEEP_A, (long) aPanelSize(KC) * (MC / mr))) {
            return false;
        }
        packedA = GemmBuffers.doubles(0, (int) elements);
        return true;
    }

    @Override
    void packB(int p0, int kc, int j0, int nc) {
        DgemmPack.packB(b, p0, kc, j0, nc, packedB);
    }

    @Override
    void packA(int i0, int rows, int p0, int kc, int at) {
        DgemmPack.packA(a, i0, rows, p0, kc, packedA, at);
    }

    @Override
    void tile(int at, int i0, int rows, int j0, int cols, int panel, int kc, boolean first) {
        DgemmKernel.tile(packedA, at, packedB, panel * kc * nr, kc, c.seg(), c.index(i0, j0), c.ld(), rows, cols,
                alpha, first ? beta : 1.0, spill);
    }
}
