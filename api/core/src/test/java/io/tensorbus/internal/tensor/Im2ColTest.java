package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.tensorbus.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * float32 "valid" unit-stride geometries take the heap-array kernels, float64 the general ones: unfolding
 * and folding the same data both ways must give the same numbers, also with offsets and a wide row pitch.
 */
class Im2ColTest {

    @ParameterizedTest(name = "{0} channels, {1}x{2} planes, {3}x{4} kernel")
    @CsvSource({"1, 28, 28, 5, 5", "10, 12, 12, 5, 5", "3, 7, 9, 2, 3", "2, 4, 4, 4, 4"})
    void validUnitStrideKernelsMatchTheGeneralOnes(int channels, int h, int w, int kh, int kw) {
        ConvGeometry g = ConvGeometry.of("test", h, w, new int[] {kh, kw}, new int[] {1, 1}, new int[] {0, 0},
                new int[] {1, 1}, false);
        int rows = channels * kh * kw;
        int p = g.outPlane();
        int ld = 3 * p;
        int offset = 5;
        Tensor x = Tensor.randn(new Generator(1), DType.FLOAT32, offset + channels * h * w);
        Tensor cols32 = unfold(x, channels, g, ld, offset, rows);
        Tensor cols64 = unfold(x.to(DType.FLOAT64), channels, g, ld, offset, rows);
        assertArrayEquals(cols64.toDoubleArray(), cols32.to(DType.FLOAT64).toDoubleArray());

        Tensor back32 = fold(cols32, channels, g, ld, offset);
        Tensor back64 = fold(cols64, channels, g, ld, offset);
        double[] expected = back64.toDoubleArray();
        double[] actual = back32.to(DType.FLOAT64).toDoubleArray();
        for (int i = 0; i < expected.length; i++) {
            // Sums of up to kh*kw terms in float32 against float64.
            Assertions.assertEquals(expected[i], actual[i], 1e-5 * (1 + Math.abs(expected[i])));
        }
    }

    @ParameterizedTest(name = "{0} images of {1} channels, {2}x{3} planes, {4}x{4} kernel")
    @CsvSource({"4, 10, 12, 12, 5", "3, 1, 28, 28, 5", "5, 2, 7, 9, 3", "2, 3, 4, 4, 4"})
    void batchWideKernelsMatchImageByImage(int images, int channels, int h, int w, int k) {
        ConvGeometry g = ConvGeometry.of("test", h, w, new int[] {k, k}, new int[] {1, 1}, new int[] {0, 0},
                new int[] {1, 1}, false);
        int rows = channels * k * k;
        int p = g.outPlane();
        int ld = images * p + 3;
        int image = channels * h * w + 2;
        int offset = 7;
        for (DType t : new DType[] {DType.FLOAT32, DType.FLOAT64}) {
            boolean isFloat = t == DType.FLOAT32;
            Tensor x = Tensor.randn(new Generator(2), DType.FLOAT32, offset + images * image).to(t);
            Tensor each = Tensor.zeros(t, rows * ld);
            Tensor batch = Tensor.zeros(t, rows * ld);
            for (int n = 0; n < images; n++) {
                Im2Col.im2col(x.dataSegment(), offset + (long) n * image, channels, g, each.dataSegment(),
                        (long) n * p, ld, isFloat);
            }
            Im2Col.im2colBatch(x.dataSegment(), offset, image, images, channels, g, batch.dataSegment(), 0, ld,
                    isFloat);
            assertArrayEquals(each.toDoubleArray(), batch.toDoubleArray(), t + " im2col");

            Tensor foldedEach = Tensor.full(0.25, t, offset + images * image);
            Tensor foldedBatch = Tensor.full(0.25, t, offset + images * image);
            for (int n = 0; n < images; n++) {
                Im2Col.col2im(each.dataSegment(), (long) n * p, ld, channels, g, foldedEach.dataSegment(),
                        offset + (long) n * image, isFloat);
            }
            Im2Col.col2imBatch(batch.dataSegment(), 0, ld, images, channels, g, foldedBatch.dataSegment(), offset,
                    image, isFloat);
            // The same additions in the same order (kernel position by position), so the same bits.
            assertArrayEquals(foldedEach.toDoubleArray(), foldedBatch.toDoubleArray(), t + " col2im");
        }
    }

    private static Tensor unfold(Tensor x, int channels, ConvGeometry g, int ld, int offset, int rows) {
        Tensor cols = Tensor.zeros(x.dtype(), rows * ld + 2 * g.outPlane());
        MemorySegment c = cols.dataSegment();
        Im2Col.im2col(x.dataSegment(), offset, channels, g, c, g.outPlane(), ld, x.dtype() == DType.FLOAT32);
        return cols;
    }

    private static Tensor fold(Tensor cols, int channels, ConvGeometry g, int ld, int offset) {
        Tensor x = Tensor.full(0.5, cols.dtype(), offset + channels * g.inPlane());
        Im2Col.col2im(cols.dataSegment(), g.outPlane(), ld, channels, g, x.dataSegment(), offset,
                cols.dtype() == DType.FLOAT32);
        return x;
    }
}
