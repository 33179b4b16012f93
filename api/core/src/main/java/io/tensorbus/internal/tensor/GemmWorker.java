package io.tensorbus.internal.tensor;

/**
 * One thread's share of a GEMM: it owns the packing buffers and knows the operands, so that
 * {@link GemmDriver} only has to walk the blocks. Not thread safe; each thread makes its own.
 */
abstract class GemmWorker {
    /** Rows of C in one micro-tile (rows of an A micro-panel). */
    final int mr;
    /** Columns of C in one micro-tile (columns of a B micro-panel). */
    final int nr;
    /** Most rows of op(A) packed at once; a multiple of {@link #mr}. */
    final int mcMax;
    /** Most rows of op(B) (depth) packed at once. */
    final int kcMax;
    /** Most columns of op(B) packed at once; a multiple of {@link #nr}. */
    final int ncMax;

    GemmWorker(int mr, int nr, int mcMax, int kcMax, int ncMax) {
        this.mr = mr;
        this.nr = nr;
        this.mcMax = mcMax;
        this.kcMax = kcMax;
        this.ncMax = ncMax;
    }

    /** Elements that one packed A micro-panel of depth {@code kc} takes, padding included. */
    abstract int aPanelSize(int kc);

    /** Makes the A buffer hold at least {@code elements}; false if that is more than it will keep. */
    abstract boolean reserveA(long elements);

    /** Packs rows {@code [p0, p0+kc)} and columns {@code [j0, j0+nc)} of op(B) into micro-panels. */
    abstract void packB(int p0, int kc, int j0, int nc);

    /**
     * Packs rows {@code [i0, i0+rows)} and columns {@code [p0, p0+kc)} of op(A) as micro-panels of
     * {@link #mr} rows, {@link #aPanelSize} apart, from element {@code at} of the A buffer on.
     */
    abstract void packA(int i0, int rows, int p0, int kc, int at);

    /**
     * Multiplies the packed A micro-panel at {@code at} by packed B micro-panel {@code panel} and updates
     * the {@code rows x cols} tile of C at {@code (i0, j0)}; {@code first} says whether this is the first
     * depth block, the one that applies the caller's beta (later blocks accumulate).
     */
    abstract void tile(int at, int i0, int rows, int j0, int cols, int panel, int kc, boolean first);
}
