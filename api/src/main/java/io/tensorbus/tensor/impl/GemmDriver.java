package io.tensorbus.tensor.impl;

import io.tensorbus.tensor.Threads;
import java.util.function.Supplier;

/**
 * The blocked loop nest of a GEMM (Goto/BLIS order: column block, depth block, pack B, row micro-panel,
 * pack A, column micro-panel) and its split over the compute pool. The packed B block stays in L2 and
 * the packed A micro-panel in L1 while the micro-kernel streams the B micro-panels past it.
 */
final class GemmDriver {
    /** Below this many multiply-adds per thread, a split costs more than it saves. */
    private static final long MIN_MACS_PER_PART = 1L << 18;

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
        int depthBlocks = ceilDiv(k, w.kcMax);
        int kcEven = ceilDiv(k, depthBlocks);
        for (int j0 = n0; j0 < n1; j0 += w.ncMax) {
            int nc = Math.min(w.ncMax, n1 - j0);
            for (int p0 = 0; p0 < k; p0 += kcEven) {
                int kc = Math.min(kcEven, k - p0);
                w.packB(p0, kc, j0, nc);
                for (int i0 = m0; i0 < m1; i0 += w.mr) {
                    int rows = Math.min(w.mr, m1 - i0);
                    w.packA(i0, rows, p0, kc);
                    for (int jr = 0, panel = 0; jr < nc; jr += w.nr, panel++) {
                        w.tile(i0, rows, j0 + jr, Math.min(w.nr, nc - jr), panel, kc, p0 == 0);
                    }
                }
            }
        }
    }

    static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }
}
