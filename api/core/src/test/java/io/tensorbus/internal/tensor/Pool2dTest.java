package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.nn.Functional;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Pool2dTest {

    /** float32 2x2/2 pooling takes the branch-free kernel, float64 the general scan: both must agree. */
    @Test
    void twoByTwoPoolingAgreesWithTheGeneralScanOnTiesNaNsAndInfinities() {
        Tensor x = Tensor.randint(new Generator(3), -2, 3, 4, 3, 8, 10).to(DType.FLOAT32);
        x.set(Float.NaN, 0, 0, 0, 1);
        x.set(Float.NaN, 0, 0, 2, 2);
        x.set(Float.NaN, 0, 0, 3, 3);
        x.set(Float.NEGATIVE_INFINITY, 1, 1, 0, 0);
        x.set(Float.NEGATIVE_INFINITY, 1, 1, 0, 1);
        x.set(Float.NEGATIVE_INFINITY, 1, 1, 1, 0);
        x.set(Float.NEGATIVE_INFINITY, 1, 1, 1, 1);
        Tensor x32 = x.clone().requiresGrad(true);
        Tensor x64 = x.to(DType.FLOAT64).requiresGrad(true);
        Tensor y32 = Functional.maxPool2d(x32, 2);
        Tensor y64 = Functional.maxPool2d(x64, 2);
        assertArrayEquals(y64.toDoubleArray(), y32.to(DType.FLOAT64).toDoubleArray());
        // Gradients land on the chosen element: equal gradients mean equal argmax indices.
        Tensor g = Tensor.rand(new Generator(4), DType.FLOAT32, y32.shape());
        y32.backward(g);
        y64.backward(g.to(DType.FLOAT64));
        assertArrayEquals(x64.grad().toDoubleArray(), x32.grad().to(DType.FLOAT64).toDoubleArray());
        assertEquals(g.getDouble(0, 0, 0, 0), x32.grad().getDouble(0, 0, 0, 1), "the NaN of a window wins");
    }

    /** Gradients of every window layout, overlapping or not, tiling the input or not, match the float64 scan. */
    @ParameterizedTest(name = "{0}x{1} input, kernel {2}, stride {3}, padding {4}")
    @CsvSource({"8, 8, 2, 2, 0", "9, 7, 2, 2, 0", "2, 2, 3, 2, 1", "4, 4, 3, 2, 1",
            "5, 6, 3, 2, 1", "3, 3, 2, 2, 0"})
    void pooledGradientsMatchTheGeneralScan(int h, int w, int k, int s, int p) {
        for (int round = 0; round < 3; round++) {
            Tensor x = Tensor.randn(new Generator(5 + round), DType.FLOAT32, 3, 2, h, w);
            Tensor x32 = x.clone().requiresGrad(true);
            Tensor x64 = x.to(DType.FLOAT64).requiresGrad(true);
            Tensor y32 = Functional.maxPool2d(x32, new int[] {k, k}, new int[] {s, s}, new int[] {p, p}, false);
            Tensor y64 = Functional.maxPool2d(x64, new int[] {k, k}, new int[] {s, s}, new int[] {p, p}, false);
            Tensor g = Tensor.randn(new Generator(9), DType.FLOAT32, y32.shape());
            y32.backward(g);
            y64.backward(g.to(DType.FLOAT64));
            // Overlapping windows add gradients: in float32 against float64.
            assertArrayEquals(x64.grad().toDoubleArray(), x32.grad().to(DType.FLOAT64).toDoubleArray(), 1e-6);
        }
    }
}
