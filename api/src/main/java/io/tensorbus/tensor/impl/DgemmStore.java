package io.tensorbus.tensor.impl;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * Writes a finished float64 micro-tile into C: {@code C = alpha * tile + beta * C}, never reading C when
 * {@code beta == 0}. The tile arrives in an array, not in vectors: vectors passed to a method that the JIT
 * does not inline get boxed on every iteration of the caller's loop.
 */
final class DgemmStore {
    private static final VectorSpecies<Double> SPECIES = DoubleVector.SPECIES_PREFERRED;
    private static final int LANES = SPECIES.length();
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private DgemmStore() {
    }

    /**
     * Writes the {@code rows x cols} corner of {@code tile} (rows {@code stride} doubles apart) into C at
     * element {@code ci}, rows {@code ldc} elements apart.
     */
    static void store(double[] tile, int stride, MemorySegment c, long ci, int ldc, int rows, int cols,
            double alpha, double beta) {
        DoubleVector va = DoubleVector.broadcast(SPECIES, alpha);
        DoubleVector vb = DoubleVector.broadcast(SPECIES, beta);
        int full = cols - cols % LANES;
        for (int r = 0; r < rows; r++) {
            long at = (ci + (long) r * ldc) * Double.BYTES;
            int t = r * stride;
            for (int j = 0; j < full; j += LANES) {
                DoubleVector v = DoubleVector.fromArray(SPECIES, tile, t + j).mul(va);
                long cj = at + (long) j * Double.BYTES;
                if (beta != 0.0) {
                    v = DoubleVector.fromMemorySegment(SPECIES, c, cj, ORDER).fma(vb, v);
                }
                v.intoMemorySegment(c, cj, ORDER);
            }
            if (full < cols) {
                storeMasked(tile, t + full, c, at + (long) full * Double.BYTES, SPECIES.indexInRange(full, cols), va, vb,
                        beta != 0.0);
            }
        }
    }

    private static void storeMasked(double[] tile, int t, MemorySegment c, long at, VectorMask<Double> m,
            DoubleVector va, DoubleVector vb, boolean readC) {
        DoubleVector v = DoubleVector.fromArray(SPECIES, tile, t).mul(va);
        if (readC) {
            v = DoubleVector.fromMemorySegment(SPECIES, c, at, ORDER, m).fma(vb, v);
        }
        v.intoMemorySegment(c, at, ORDER, m);
    }
}
