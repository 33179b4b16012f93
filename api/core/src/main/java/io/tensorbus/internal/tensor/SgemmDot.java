package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code C = alpha * A * B^T + beta * C} for few rows and columns and a long depth, as dot products of rows:
 * the weight gradient of a convolution ({@code gy [out, N*P]} times {@code columns [K, N*P]} transposed). Both
 * operands are row-major with contiguous rows, so nothing is packed or transposed; the packed GEMM spent
 * most of such a product transposing B. Four rows of A share each load of a row of B, and the depth is
 * walked in blocks that keep those four rows in the first-level cache.
 */
final class SgemmDot {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /** Floats of depth per block: four rows of A (16 KiB) stay in L1 while every row of B passes. */
    private static final int DEPTH_BLOCK = 1024;

    private SgemmDot() {
    }

    /**
     * True for the shapes this kernel serves better than the packed GEMM (not transA, transB; measured:
     * 10x25x36864 0.25 against 0.51 ms, but 20x250x4096 0.48 against 0.41 ms, so only small outputs).
     */
    static boolean applies(boolean transA, boolean transB, int m, int n, int k) {
        return !transA && transB && m <= 32 && (long) m * n <= 1024 && k >= 1024;
    }

    static void run(int m, int n, int k, float alpha, GemmMatrix a, GemmMatrix b, float beta, GemmMatrix c) {
        Threads.parallelFor(0, n, Threads.grain((long) m * k), (j0, j1) -> {
            float[] sums = new float[m * (j1 - j0)];
            float[] lanes = new float[S.length()];
            for (int kb = 0; kb < k; kb += DEPTH_BLOCK) {
                int len = Math.min(DEPTH_BLOCK, k - kb);
                for (int i = 0; i < m; i += 4) {
                    for (int j = j0; j < j1; j++) {
                        dots(a, b, i, Math.min(4, m - i), j, kb, len, sums, (j1 - j0), j - j0, lanes);
                    }
                }
            }
            store(sums, m, j0, j1, alpha, beta, c);
        });
    }

    /**
     * Adds the dot products of rows {@code i .. i+rows} of A with row {@code j} of B over one depth block.
     * {@code lanes} is the caller's scratch of one vector's floats. Nothing here is allocated, and no vector leaves
     * the method: one passed to a method the JIT does not inline is boxed on every call.
     */
    private static void dots(GemmMatrix a, GemmMatrix b, int i, int rows, int j, int kb, int len, float[] sums,
            int width, int col, float[] lanes) {
        MemorySegment as = a.seg();
        MemorySegment bs = b.seg();
        long b0 = (b.off() + (long) j * b.ld() + kb) * 4;
        long a0 = rowStart(a, i, 0, rows, kb);
        long a1 = rowStart(a, i, 1, rows, kb);
        long a2 = rowStart(a, i, 2, rows, kb);
        long a3 = rowStart(a, i, 3, rows, kb);
        FloatVector s0 = FloatVector.zero(S);
        FloatVector s1 = s0;
        FloatVector s2 = s0;
        FloatVector s3 = s0;
        int t = 0;
        int step = S.length();
        for (; t <= len - step; t += step) {
            long off = (long) t * 4;
            FloatVector bv = FloatVector.fromMemorySegment(S, bs, b0 + off, ORDER);
            s0 = FloatVector.fromMemorySegment(S, as, a0 + off, ORDER).fma(bv, s0);
            s1 = FloatVector.fromMemorySegment(S, as, a1 + off, ORDER).fma(bv, s1);
            s2 = FloatVector.fromMemorySegment(S, as, a2 + off, ORDER).fma(bv, s2);
            s3 = FloatVector.fromMemorySegment(S, as, a3 + off, ORDER).fma(bv, s3);
        }
        float tail0 = 0f;
        float tail1 = 0f;
        float tail2 = 0f;
        float tail3 = 0f;
        for (; t < len; t++) {
            long off = (long) t * 4;
            float bt = bs.get(ValueLayout.JAVA_FLOAT, b0 + off);
            tail0 += as.get(ValueLayout.JAVA_FLOAT, a0 + off) * bt;
            tail1 += as.get(ValueLayout.JAVA_FLOAT, a1 + off) * bt;
            tail2 += as.get(ValueLayout.JAVA_FLOAT, a2 + off) * bt;
            tail3 += as.get(ValueLayout.JAVA_FLOAT, a3 + off) * bt;
        }
        s0.intoArray(lanes, 0);
        sums[i * width + col] += inOrder(lanes) + tail0;
        if (rows > 1) {
            s1.intoArray(lanes, 0);
            sums[(i + 1) * width + col] += inOrder(lanes) + tail1;
        }
        if (rows > 2) {
            s2.intoArray(lanes, 0);
            sums[(i + 2) * width + col] += inOrder(lanes) + tail2;
        }
        if (rows > 3) {
            s3.intoArray(lanes, 0);
            sums[(i + 3) * width + col] += inOrder(lanes) + tail3;
        }
    }

    /**
     * The lanes of a vector added first to last. Not {@code reduceLanes(ADD)}, whose order the Vector API
     * leaves open: compiled code adds in a tree, the interpreter in a row, so the same product gave other bits
     * before and after the JIT compiler reached it (seen as training runs that differed from run to run).
     */
    private static float inOrder(float[] lanes) {
        float s = 0f;
        for (float lane : lanes) {
            s += lane;
        }
        return s;
    }

    /** Byte offset of row {@code i + r} of A at depth {@code kb}; rows past the last repeat it (not stored). */
    private static long rowStart(GemmMatrix a, int i, int r, int rows, int kb) {
        return (a.off() + (long) (i + Math.min(r, rows - 1)) * a.ld() + kb) * 4;
    }

    private static void store(float[] sums, int m, int j0, int j1, float alpha, float beta, GemmMatrix c) {
        int width = j1 - j0;
        for (int i = 0; i < m; i++) {
            for (int j = j0; j < j1; j++) {
                long at = (c.off() + (long) i * c.ld() + j) * 4;
                float v = alpha * sums[i * width + j - j0];
                if (beta != 0f) {
                    v += beta * c.seg().get(ValueLayout.JAVA_FLOAT, at);
                }
                c.seg().set(ValueLayout.JAVA_FLOAT, at, v);
            }
        }
    }
}
