package io.tensorbus.tensor.impl;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * The float64 micro-kernel: a {@value #MR} x (3 vectors) tile of C held in 18 vector registers, updated
 * once per depth step with three loads of packed B and {@value #MR} broadcasts of packed A.
 */
final class DgemmKernel {
    static final VectorSpecies<Double> SPECIES = DoubleVector.SPECIES_PREFERRED;
    /** Lanes per vector. */
    static final int LANES = SPECIES.length();
    /** Rows per micro-tile. */
    static final int MR = 6;
    /** Columns per micro-tile: three vectors. */
    static final int NR = 3 * LANES;

    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final long BYTES = Double.BYTES;

    private DgemmKernel() {
    }

    /**
     * Multiplies {@code pa} ({@code kc} groups of {@link #MR}) by {@code pb[b..]} ({@code kc} rows of
     * {@link #NR}) and writes {@code alpha * product + beta * C} into the {@code rows x cols} corner of the
     * tile whose first element is C element {@code ci}; {@code spill} holds {@code MR * NR} doubles.
     */
    static void tile(double[] pa, double[] pb, int b, int kc, MemorySegment c, long ci, int ldc,
            int rows, int cols, double alpha, double beta, double[] spill) {
        DoubleVector c00 = DoubleVector.zero(SPECIES), c01 = c00, c02 = c00;
        DoubleVector c10 = c00, c11 = c00, c12 = c00;
        DoubleVector c20 = c00, c21 = c00, c22 = c00;
        DoubleVector c30 = c00, c31 = c00, c32 = c00;
        DoubleVector c40 = c00, c41 = c00, c42 = c00;
        DoubleVector c50 = c00, c51 = c00, c52 = c00;
        for (int p = 0, a = 0; p < kc; p++, a += MR, b += NR) {
            DoubleVector b0 = DoubleVector.fromArray(SPECIES, pb, b);
            DoubleVector b1 = DoubleVector.fromArray(SPECIES, pb, b + LANES);
            DoubleVector b2 = DoubleVector.fromArray(SPECIES, pb, b + 2 * LANES);
            DoubleVector x = DoubleVector.broadcast(SPECIES, pa[a]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            c02 = x.fma(b2, c02);
            x = DoubleVector.broadcast(SPECIES, pa[a + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            c12 = x.fma(b2, c12);
            x = DoubleVector.broadcast(SPECIES, pa[a + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            c22 = x.fma(b2, c22);
            x = DoubleVector.broadcast(SPECIES, pa[a + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            c32 = x.fma(b2, c32);
            x = DoubleVector.broadcast(SPECIES, pa[a + 4]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            c42 = x.fma(b2, c42);
            x = DoubleVector.broadcast(SPECIES, pa[a + 5]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
            c52 = x.fma(b2, c52);
        }
        if (rows == MR && cols == NR) {
            long row = ci * BYTES;
            long step = ldc * BYTES;
            storeRow(c, row, c00, c01, c02, alpha, beta);
            storeRow(c, row += step, c10, c11, c12, alpha, beta);
            storeRow(c, row += step, c20, c21, c22, alpha, beta);
            storeRow(c, row += step, c30, c31, c32, alpha, beta);
            storeRow(c, row += step, c40, c41, c42, alpha, beta);
            storeRow(c, row + step, c50, c51, c52, alpha, beta);
            return;
        }
        spillRow(spill, 0, c00, c01, c02);
        spillRow(spill, 1, c10, c11, c12);
        spillRow(spill, 2, c20, c21, c22);
        spillRow(spill, 3, c30, c31, c32);
        spillRow(spill, 4, c40, c41, c42);
        spillRow(spill, 5, c50, c51, c52);
        storeCorner(spill, c, ci, ldc, rows, cols, alpha, beta);
    }

    private static void storeRow(MemorySegment c, long at, DoubleVector v0, DoubleVector v1, DoubleVector v2,
            double alpha, double beta) {
        store(c, at, v0, alpha, beta);
        store(c, at + LANES * BYTES, v1, alpha, beta);
        store(c, at + 2 * LANES * BYTES, v2, alpha, beta);
    }

    private static void store(MemorySegment c, long at, DoubleVector v, double alpha, double beta) {
        DoubleVector r = v.mul(alpha);
        if (beta != 0.0) {
            r = DoubleVector.fromMemorySegment(SPECIES, c, at, ORDER).fma(DoubleVector.broadcast(SPECIES, beta), r);
        }
        r.intoMemorySegment(c, at, ORDER);
    }

    private static void spillRow(double[] spill, int r, DoubleVector v0, DoubleVector v1, DoubleVector v2) {
        v0.intoArray(spill, r * NR);
        v1.intoArray(spill, r * NR + LANES);
        v2.intoArray(spill, r * NR + 2 * LANES);
    }

    /** Writes the {@code rows x cols} corner of a spilled tile with masked stores. */
    private static void storeCorner(double[] spill, MemorySegment c, long ci, int ldc, int rows, int cols,
            double alpha, double beta) {
        for (int r = 0; r < rows; r++) {
            long at = (ci + (long) r * ldc) * BYTES;
            for (int j = 0; j < cols; j += LANES) {
                VectorMask<Double> m = SPECIES.indexInRange(j, cols);
                DoubleVector v = DoubleVector.fromArray(SPECIES, spill, r * NR + j).mul(alpha);
                long cj = at + j * BYTES;
                if (beta != 0.0) {
                    v = DoubleVector.fromMemorySegment(SPECIES, c, cj, ORDER, m).fma(DoubleVector.broadcast(SPECIES, beta), v);
                }
                v.intoMemorySegment(c, cj, ORDER, m);
            }
        }
    }
}
