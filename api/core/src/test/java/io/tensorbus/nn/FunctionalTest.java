package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Philox;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class FunctionalTest {
    private static void fails(Executable call, String... fragments) {
        Throwable e = assertThrows(IllegalArgumentException.class, call);
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
        }
    }

    @Test
    void dropoutIsReproducibleFromItsSeedAndScalesKeptValues() {
        Tensor x = Tensor.ones(1000);
        Tensor a = Functional.dropout(x, 0.25, true, new Generator(3));
        Tensor b = Functional.dropout(x, 0.25, true, new Generator(3));
        assertArrayEquals(a.toFloatArray(), b.toFloatArray());
        for (float v : a.toFloatArray()) {
            assertTrue(v == 0 || Math.abs(v - 1 / 0.75f) < 1e-6, "value " + v);
        }
        assertEquals(0.75, a.gt(0.0).to(DType.FLOAT32).mean().item(), 0.05);
        assertSame(x, Functional.dropout(x, 0.25, false, null));
        fails(() -> Functional.dropout(x, 1.5, true, null), "between 0 and 1");
    }

    @Test
    void dropoutDrawsFromTheGeneratorsOffsetSoASetOffsetRepeatsAMask() {
        Generator g = new Generator(11);
        Tensor x = Tensor.ones(DType.FLOAT64, 10);
        Tensor first = Functional.dropout(x, 0.5, true, g);
        assertEquals(3, g.offset(), "ten draws take three blocks of four");
        Tensor second = Functional.dropout(x, 0.5, true, g);
        g.setOffset(0);
        assertArrayEquals(first.toDoubleArray(), Functional.dropout(x, 0.5, true, g).toDoubleArray());
        assertArrayEquals(second.toDoubleArray(), Functional.dropout(x, 0.5, true, g).toDoubleArray());
        for (int i = 0; i < 10; i++) {
            double kept = Philox.uniform(11, 0, i) < 0.5 ? 2 : 0;
            assertEquals(kept, first.getDouble(i), 0.0, "element " + i);
        }
        assertEquals(0, Functional.dropout(x, 1, true, g).sum().item(), 0.0);
    }

    @Test
    void batchNormUpdatesRunningStatisticsAsPyTorch() {
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 10, 20, 30, 40}, 2, 2, 2).transpose(1, 2).contiguous();
        // channel 0 gets 1, 3, 10, 30; channel 1 gets 2, 4, 20, 40
        Tensor rm = Tensor.zeros(2);
        Tensor rv = Tensor.ones(2);
        Tensor y = Functional.batchNorm(x, rm, rv, null, null, true, 0.1, 1e-5);
        assertArrayEquals(new float[] {1.1f, 1.65f}, rm.toFloatArray(), 1e-5f);
        double var0 = variance(new double[] {1, 3, 10, 30}, true);
        assertEquals(0.9 + 0.1 * var0, rv.getDouble(0), 1e-3);
        assertEquals(0, y.select(1, 0).mean().item(), 1e-6);
        Tensor eval = Functional.batchNorm(x, rm, rv, null, null, false, 0.1, 1e-5);
        assertEquals((1 - 1.1) / Math.sqrt(rv.getDouble(0) + 1e-5), eval.getDouble(0, 0, 0), 1e-5);
    }

    private static double variance(double[] v, boolean unbiased) {
        double m = 0;
        for (double x : v) {
            m += x / v.length;
        }
        double s = 0;
        for (double x : v) {
            s += (x - m) * (x - m);
        }
        return s / (unbiased ? v.length - 1 : v.length);
    }

    @Test
    void crossEntropyOfUniformLogitsIsLogOfTheClassCount() {
        Tensor loss = Functional.crossEntropy(Tensor.zeros(4, 10), Tensor.of(new long[] {0, 3, 9, 2}));
        assertEquals(Math.log(10), loss.item(), 1e-6);
    }

    @Test
    void convAndPoolingGiveTheExpectedShapes() {
        Tensor x = Tensor.randn(2, 3, 28, 28);
        assertArrayEquals(new int[] {2, 8, 24, 24}, Functional.conv2d(x, Tensor.randn(8, 3, 5, 5), null, 1, 0).shape());
        assertArrayEquals(new int[] {2, 8, 14, 14}, Functional.conv2d(x, Tensor.randn(8, 3, 3, 3), null, 2, 1).shape());
        assertArrayEquals(new int[] {2, 3, 14, 14}, Functional.maxPool2d(x, 2).shape());
        assertArrayEquals(new int[] {2, 3, 9, 9}, Functional.avgPool2d(x, 3).shape());
        assertArrayEquals(new int[] {2, 3, 1, 1}, Functional.adaptiveAvgPool2d(x, 1, 1).shape());
    }

    @Test
    void layersNameTheShapesThatDoNotFit() {
        Tensor x = Tensor.randn(2, 3, 8, 8);
        fails(() -> Functional.conv2d(x, Tensor.randn(4, 2, 3, 3), null, 1, 0), "[4, 2, 3, 3]", "2 channels",
                "[2, 3, 8, 8]");
        fails(() -> Functional.conv2d(Tensor.randn(3, 8, 8), Tensor.randn(4, 3, 3, 3), null, 1, 0), "4-d");
        fails(() -> Functional.conv2d(x, Tensor.randn(4, 3, 9, 9), null, 1, 0), "too small");
        fails(() -> Functional.conv2d(x, Tensor.randn(4, 3, 3, 3), Tensor.zeros(5), 1, 0), "bias");
        fails(() -> Functional.linear(Tensor.randn(2, 7), Tensor.randn(3, 5), null), "7 features", "expects 5");
        fails(() -> Functional.maxPool2d(x, new int[] {2, 2}, null, new int[] {2, 2}, false), "half of kernel");
        fails(() -> Functional.batchNorm(x, Tensor.zeros(4), Tensor.ones(4), null, null, true, 0.1, 1e-5),
                "runningMean", "3 elements");
        fails(() -> Functional.batchNorm(Tensor.randn(1, 3), null, null, null, null, true, 0.1, 1e-5),
                "more than 1 value");
        fails(() -> Functional.nllLoss(Tensor.randn(2, 3), Tensor.of(new long[] {0, 3})), "target 3", "classes: 3");
        fails(() -> Functional.nllLoss(Tensor.randn(2, 3), Tensor.of(new float[] {0, 1})), "int64");
        fails(() -> Functional.mseLoss(Tensor.randn(2, 3), Tensor.randn(3, 2), Reduction.MEAN), "[2, 3]", "[3, 2]");
    }
}
