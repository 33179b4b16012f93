package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * Writes a finished float32 micro-tile into C: {@code C = alpha * tile + beta * C}, never reading C when
 * {@code beta == 0}. The tile arrives in an array, not in vectors: vectors passed to a method that the JIT
 * does not inline get boxed on every iteration of the caller's loop.
 */
final class SgemmStore {
    private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    private static final int LANES = SPECIES.length();
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private SgemmStore() {
    }

    /**
     * Writes the {@code rows x cols} corner of {@code tile} (rows {@code stride} floats apart) into C at
     * element {@code ci}, rows {@code ldc} elements apart.
     */
    static void store(float[] tile, int stride, MemorySegment c, long ci, int ldc, int rows, int cols,
            float alpha, float beta) {
        FloatVector va = FloatVector.broadcast(SPECIES, alpha);
        FloatVector vb = FloatVector.broadcast(SPECIES, beta);
        int full = cols - cols % LANES;
        for (int r = 0; r < rows; r++) {
            long at = (ci + (long) r * ldc) * Float.BYTES;
            int t = r * stride;
            for (int j = 0; j < full; j += LANES) {
                FloatVector v = FloatVector.fromArray(SPECIES, tile, t + j).mul(va);
                long cj = at + (long) j * Float.BYTES;
                if (beta != 0f) {
                    v = FloatVector.fromMemorySegment(SPECIES, c, cj, ORDER).fma(vb, v);
                }
                v.intoMemorySegment(c, cj, ORDER);
            }
            if (full < cols) {
                storeMasked(tile, t + full, c, at + (long) full * Float.BYTES, cols - full, alpha, beta);
            }
        }
    }

    /**
     * The last, partial vector of a row, its first {@code count} lanes. It takes alpha, beta and the count, not the
     * caller's broadcast vectors or mask: vectors and masks passed to a method that is not inlined are boxed, an
     * allocation each per row of every tile.
     */
    private static void storeMasked(float[] tile, int t, MemorySegment c, long at, int count, float alpha,
            float beta) {
        VectorMask<Float> m = SPECIES.indexInRange(0, count);
        FloatVector v = FloatVector.fromArray(SPECIES, tile, t).mul(alpha);
        if (beta != 0f) {
            v = FloatVector.fromMemorySegment(SPECIES, c, at, ORDER, m).fma(FloatVector.broadcast(SPECIES, beta), v);
        }
        v.intoMemorySegment(c, at, ORDER, m);
    }
}
