package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.util.function.Supplier;

/**
 * The blocked loop nest of a GEMM (Goto/BLIS order: column block, depth block, pack B, row block, pack A,
 * row micro-panel, column micro-panel) and its split over the compute pool. The packed B block stays in
 * L2 and an A micro-panel in L1 while the micro-kernel streams the B micro-panels past it. When op(A)
 * packed whole fits the worker's budget, it is packed once, during the first column block, rather than
 * once per column block.
 */
final class GemmDriver {
    /**
     * Below this many multiply-adds per thread, waking a pool thread costs more than it saves (measured here: 2 threads
     * lose below about 200^3).
     */
    private static final long MIN_MACS_PER_PART = 1L << 22;

    private GemmDriver() {
    }

    /** Computes the {@code m x n} product with depth {@code k > 0}, each thread with a worker of its own. */
    static void run(int m, int n, int k, Supplier<GemmWorker> workers) {
        GemmWorker first = workers.get();
        int rowTiles = ceilDiv(m, first.mr);
        int colTiles = ceilDiv(n, first.nr);
        boolean splitRows = rowTiles >= colTiles;
        int tiles = splitRows ? rowTiles : colTiles;
        long macs = (long) m * n * k;
        int parts = (int) Math.min(Math.min(Threads.get(), tiles), Math.max(1, macs / MIN_MACS_PER_PART));
        if (parts <= 1) {
            runBlock(first, 0, m, 0, n, k);
            return;
        }
        Threads.parallelFor(0, parts, 1, (s, e) -> {
            GemmWorker w = s == 0 ? first : workers.get();
            for (int part = s; part < e; part++) {
                int t0 = (int) ((long) tiles * part / parts);
                int t1 = (int) ((long) tiles * (part + 1) / parts);
                if (splitRows) {
                    runBlock(w, t0 * w.mr, Math.min(m, t1 * w.mr), 0, n, k);
                } else {
                    runBlock(w, 0, m, t0 * w.nr, Math.min(n, t1 * w.nr), k);
                }
            }
        });
    }

    /** The serial loop nest over rows {@code [m0, m1)} and columns {@code [n0, n1)} of C. */
    static void runBlock(GemmWorker w, int m0, int m1, int n0, int n1, int k) {
        int kc = evenSplit(k, w.kcMax, 1);
        int nc = evenSplit(n1 - n0, w.ncMax, w.nr);
        int depthSize = ceilDiv(m1 - m0, w.mr) * w.aPanelSize(kc);
        boolean keepA = n1 - n0 > nc && w.reserveA((long) ceilDiv(k, kc) * depthSize);
        if (!keepA) {
            w.reserveA((long) ceilDiv(w.mcMax, w.mr) * w.aPanelSize(kc));
        }
        for (int j0 = n0; j0 < n1; j0 += nc) {
            int ncHere = Math.min(nc, n1 - j0);
            for (int p0 = 0, d = 0; p0 < k; p0 += kc, d++) {
                int kcHere = Math.min(kc, k - p0);
                w.packB(p0, kcHere, j0, ncHere);
                if (keepA) {
                    int base = d * depthSize;
                    if (j0 == n0) {
                        w.packA(m0, m1 - m0, p0, kcHere, base);
                    }
                    microPanels(w, base, m0, m1 - m0, j0, ncHere, kcHere, p0 == 0);
                    continue;
                }
                for (int i0 = m0; i0 < m1; i0 += w.mcMax) {
                    int mcHere = Math.min(w.mcMax, m1 - i0);
                    w.packA(i0, mcHere, p0, kcHere, 0);
                    microPanels(w, 0, i0, mcHere, j0, ncHere, kcHere, p0 == 0);
                }
            }
        }
    }

    /** Runs the micro-kernel over every (A micro-panel, B micro-panel) pair of one packed block pair. */
    private static void microPanels(GemmWorker w, int at, int i0, int mc, int j0, int nc, int kc, boolean first) {
        int panelSize = w.aPanelSize(kc);
        for (int ir = 0; ir < mc; ir += w.mr, at += panelSize) {
            int rows = Math.min(w.mr, mc - ir);
            for (int jr = 0, panel = 0; jr < nc; jr += w.nr, panel++) {
                w.tile(at, i0 + ir, rows, j0 + jr, Math.min(w.nr, nc - jr), panel, kc, first);
            }
        }
    }

    /** Splits {@code total} into equal blocks of at most {@code max}, rounded up to a multiple of {@code unit}. */
    static int evenSplit(int total, int max, int unit) {
        int blocks = ceilDiv(total, max);
        return Math.min(max, ceilDiv(ceilDiv(total, blocks), unit) * unit);
    }

    static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }
}
