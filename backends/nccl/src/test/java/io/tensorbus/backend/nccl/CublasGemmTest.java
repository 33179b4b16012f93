package io.tensorbus.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.GemmOperand;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The cuBLAS call of a row-major GEMM, checked without a GPU: cuBLAS's column-major semantics, written out here,
 * applied to the arguments {@link CublasGemm#columnMajor} gives, must compute the row-major product, for every
 * combination of transposed operands, with leading dimensions past the rows, offsets and batches.
 */
class CublasGemmTest {
    @Test
    void theColumnMajorCallComputesTheRowMajorProductForEveryTransposition() {
        int batch = 2;
        int m = 3;
        int n = 5;
        int k = 4;
        SplittableRandom random = new SplittableRandom(3);
        for (boolean ta : new boolean[] {false, true}) {
            for (boolean tb : new boolean[] {false, true}) {
                // Stored shapes: a is [m, k] (or [k, m] transposed), b is [k, n] (or [n, k]); each row padded by 2.
                int aRows = ta ? k : m;
                int aLd = (ta ? m : k) + 2;
                int bRows = tb ? n : k;
                int bLd = (tb ? k : n) + 2;
                float[] a = random(random, 1 + batch * aRows * aLd);
                float[] b = random(random, 3 + batch * bRows * bLd);
                GemmOperand oa = new GemmOperand(host(a), 1, aLd, (long) aRows * aLd, ta);
                GemmOperand ob = new GemmOperand(host(b), 3, bLd, (long) bRows * bLd, tb);
                int cLd = n + 1;
                float[] c = new float[batch * m * cLd];
                cublas(CublasGemm.columnMajor(m, n, k, oa, ob), c, cLd, (long) m * cLd, batch);
                for (int bi = 0; bi < batch; bi++) {
                    for (int i = 0; i < m; i++) {
                        for (int j = 0; j < n; j++) {
                            double want = 0;
                            for (int p = 0; p < k; p++) {
                                want += element(oa, bi, i, p) * element(ob, bi, p, j);
                            }
                            assertEquals(want, c[bi * m * cLd + i * cLd + j], 1e-5, "ta=" + ta + " tb=" + tb
                                    + " C[" + bi + "," + i + "," + j + "]");
                        }
                    }
                }
            }
        }
    }

    /** cuBLAS's strided-batched GEMM with alpha 1 and beta 0: column-major, element (i, j) at {@code i + j * ld}. */
    private static void cublas(CublasGemm.Call call, float[] c, int ldc, long strideC, int batch) {
        for (int bi = 0; bi < batch; bi++) {
            for (int i = 0; i < call.m(); i++) {
                for (int j = 0; j < call.n(); j++) {
                    double sum = 0;
                    for (int p = 0; p < call.k(); p++) {
                        sum += columnMajor(call.first(), call.transA(), bi, i, p)
                                * columnMajor(call.second(), call.transB(), bi, p, j);
                    }
                    c[(int) (bi * strideC + i + (long) j * ldc)] = (float) sum;
                }
            }
        }
    }

    /** Element (row, col) of operand {@code o} as cuBLAS reads it: column-major, transposed when {@code trans}. */
    private static double columnMajor(GemmOperand o, boolean trans, int bi, int row, int col) {
        long at = o.offset() + bi * o.batchStride() + (trans ? col + (long) row * o.ld() : row + (long) col * o.ld());
        return value(o, at);
    }

    /** Element (row, col) of operand {@code o} as a row-major tensor reads it. */
    private static double element(GemmOperand o, int bi, int row, int col) {
        long at = o.offset() + bi * o.batchStride() + (o.transposed() ? (long) col * o.ld() + row
                : (long) row * o.ld() + col);
        return value(o, at);
    }

    private static double value(GemmOperand o, long at) {
        return o.buffer().segment().getAtIndex(ValueLayout.JAVA_FLOAT, at);
    }

    private static float[] random(SplittableRandom random, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) random.nextDouble(-1, 1);
        }
        return v;
    }

    private static DeviceBuffer host(float[] values) {
        return DeviceBuffer.host(MemorySegment.ofArray(values), DType.FLOAT32, values.length);
    }
}
