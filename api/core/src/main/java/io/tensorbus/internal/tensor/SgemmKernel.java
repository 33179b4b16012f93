package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The float32 micro-kernel: a {@value #MR} x (3 vectors) tile of C held in 18 vector registers, updated
 * once per depth step with three loads of packed B and {@value #MR} broadcasts of packed A. Tiles at the
 * right edge of C that need only one or two vectors of columns use a narrower copy of the same loop, so
 * that a thin matrix (n = 10, 50, 64) does not pay for 48 columns.
 *
 * <p>Each loop leaves its accumulators in a small array and {@link SgemmStore} writes C from there: vectors
 * handed to a method that the JIT does not inline are boxed, and a boxed accumulator costs an allocation
 * per depth step.
 */
final class SgemmKernel {
    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    /** Lanes per vector. */
    static final int LANES = SPECIES.length();
    /** Rows per micro-tile. */
    static final int MR = 6;
    /** Columns per micro-tile: three vectors. */
    static final int NR = 3 * LANES;

    private SgemmKernel() {
    }

    /**
     * Multiplies {@code pa[a..]} ({@code kc} groups of {@link #MR}) by {@code pb[b..]} ({@code kc} rows of
     * {@link #NR}) and writes {@code alpha * product + beta * C} into the {@code rows x cols} corner of the
     * tile whose first element is C element {@code ci}; {@code spill} holds {@code MR * NR} floats.
     */
    static void tile(float[] pa, int a, float[] pb, int b, int kc, MemorySegment c, long ci, int ldc,
            int rows, int cols, float alpha, float beta, float[] spill) {
        if (cols > 2 * LANES) {
            wide(pa, a, pb, b, kc, spill);
        } else if (cols > LANES) {
            medium(pa, a, pb, b, kc, spill);
        } else {
            narrow(pa, a, pb, b, kc, spill);
        }
        SgemmStore.store(spill, NR, c, ci, ldc, rows, cols, alpha, beta);
    }

    /** Three vectors of columns: the kernel proper. */
    private static void wide(float[] pa, int a, float[] pb, int b, int kc, float[] spill) {
        FloatVector c00 = FloatVector.zero(SPECIES);
        FloatVector c01 = c00, c02 = c00;
        FloatVector c10 = c00, c11 = c00, c12 = c00;
        FloatVector c20 = c00, c21 = c00, c22 = c00;
        FloatVector c30 = c00, c31 = c00, c32 = c00;
        FloatVector c40 = c00, c41 = c00, c42 = c00;
        FloatVector c50 = c00, c51 = c00, c52 = c00;
        for (int p = 0; p < kc; p++, a += MR, b += NR) {
            FloatVector b0 = FloatVector.fromArray(SPECIES, pb, b);
            FloatVector b1 = FloatVector.fromArray(SPECIES, pb, b + LANES);
            FloatVector b2 = FloatVector.fromArray(SPECIES, pb, b + 2 * LANES);
            FloatVector x = FloatVector.broadcast(SPECIES, pa[a]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            c02 = x.fma(b2, c02);
            x = FloatVector.broadcast(SPECIES, pa[a + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            c12 = x.fma(b2, c12);
            x = FloatVector.broadcast(SPECIES, pa[a + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            c22 = x.fma(b2, c22);
            x = FloatVector.broadcast(SPECIES, pa[a + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            c32 = x.fma(b2, c32);
            x = FloatVector.broadcast(SPECIES, pa[a + 4]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            c42 = x.fma(b2, c42);
            x = FloatVector.broadcast(SPECIES, pa[a + 5]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
            c52 = x.fma(b2, c52);
        }
        c00.intoArray(spill, 0);
        c01.intoArray(spill, LANES);
        c02.intoArray(spill, 2 * LANES);
        c10.intoArray(spill, NR);
        c11.intoArray(spill, NR + LANES);
        c12.intoArray(spill, NR + 2 * LANES);
        c20.intoArray(spill, 2 * NR);
        c21.intoArray(spill, 2 * NR + LANES);
        c22.intoArray(spill, 2 * NR + 2 * LANES);
        c30.intoArray(spill, 3 * NR);
        c31.intoArray(spill, 3 * NR + LANES);
        c32.intoArray(spill, 3 * NR + 2 * LANES);
        c40.intoArray(spill, 4 * NR);
        c41.intoArray(spill, 4 * NR + LANES);
        c42.intoArray(spill, 4 * NR + 2 * LANES);
        c50.intoArray(spill, 5 * NR);
        c51.intoArray(spill, 5 * NR + LANES);
        c52.intoArray(spill, 5 * NR + 2 * LANES);
    }

    /** Two vectors of columns, for a right-edge tile. */
    private static void medium(float[] pa, int a, float[] pb, int b, int kc, float[] spill) {
        FloatVector c00 = FloatVector.zero(SPECIES);
        FloatVector c01 = c00;
        FloatVector c10 = c00, c11 = c00;
        FloatVector c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00;
        FloatVector c40 = c00, c41 = c00;
        FloatVector c50 = c00, c51 = c00;
        for (int p = 0; p < kc; p++, a += MR, b += NR) {
            FloatVector b0 = FloatVector.fromArray(SPECIES, pb, b);
            FloatVector b1 = FloatVector.fromArray(SPECIES, pb, b + LANES);
            FloatVector x = FloatVector.broadcast(SPECIES, pa[a]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(SPECIES, pa[a + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(SPECIES, pa[a + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(SPECIES, pa[a + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(SPECIES, pa[a + 4]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(SPECIES, pa[a + 5]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
        }
        c00.intoArray(spill, 0);
        c01.intoArray(spill, LANES);
        c10.intoArray(spill, NR);
        c11.intoArray(spill, NR + LANES);
        c20.intoArray(spill, 2 * NR);
        c21.intoArray(spill, 2 * NR + LANES);
        c30.intoArray(spill, 3 * NR);
        c31.intoArray(spill, 3 * NR + LANES);
        c40.intoArray(spill, 4 * NR);
        c41.intoArray(spill, 4 * NR + LANES);
        c50.intoArray(spill, 5 * NR);
        c51.intoArray(spill, 5 * NR + LANES);
    }

    /** One vector of columns, for a right-edge tile. */
    private static void narrow(float[] pa, int a, float[] pb, int b, int kc, float[] spill) {
        FloatVector c00 = FloatVector.zero(SPECIES);
        FloatVector c10 = c00;
        FloatVector c20 = c00;
        FloatVector c30 = c00;
        FloatVector c40 = c00;
        FloatVector c50 = c00;
        for (int p = 0; p < kc; p++, a += MR, b += NR) {
            FloatVector b0 = FloatVector.fromArray(SPECIES, pb, b);
            FloatVector x = FloatVector.broadcast(SPECIES, pa[a]);
            c00 = x.fma(b0, c00);
            x = FloatVector.broadcast(SPECIES, pa[a + 1]);
            c10 = x.fma(b0, c10);
            x = FloatVector.broadcast(SPECIES, pa[a + 2]);
            c20 = x.fma(b0, c20);
            x = FloatVector.broadcast(SPECIES, pa[a + 3]);
            c30 = x.fma(b0, c30);
            x = FloatVector.broadcast(SPECIES, pa[a + 4]);
            c40 = x.fma(b0, c40);
            x = FloatVector.broadcast(SPECIES, pa[a + 5]);
            c50 = x.fma(b0, c50);
        }
        c00.intoArray(spill, 0);
        c10.intoArray(spill, NR);
        c20.intoArray(spill, 2 * NR);
        c30.intoArray(spill, 3 * NR);
        c40.intoArray(spill, 4 * NR);
        c50.intoArray(spill, 5 * NR);
    }
}
