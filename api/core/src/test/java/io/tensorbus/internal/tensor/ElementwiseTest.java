package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.function.BinaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The float32 vector loops of binary ops: every operator, operands constant along a run, tails of every length, special
 * values.
 */
class ElementwiseTest {
    private interface FloatOp {
        float apply(float x, float y);
    }

    private static void check(String name, BinaryOperator<Tensor> op, FloatOp expected) {
        for (int n : new int[] {1, 7, 16, 37, 64 + 5, 1000}) {
            float[] a = Tensor.randn(new Generator(n), DType.FLOAT32, n).toFloatArray();
            float[] b = Tensor.randn(new Generator(n + 1), DType.FLOAT32, n).toFloatArray();
            // Signed zeros, infinities and NaN in the vector body and the tail alike.
            float[] special = {-0f, 0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
            for (int i = 0; i < special.length && i < n - 1; i++) {
                a[n - 1 - i] = special[i];
                b[n - 1 - (i + 2) % Math.min(n - 1, special.length)] = special[i];
            }
            float[] both = new float[n];
            float[] left = new float[n];
            float[] right = new float[n];
            for (int i = 0; i < n; i++) {
                both[i] = expected.apply(a[i], b[i]);
                left[i] = expected.apply(a[0], b[i]);
                right[i] = expected.apply(a[i], b[0]);
            }
            Tensor ta = Tensor.of(a);
            Tensor tb = Tensor.of(b);
            assertArrayEquals(both, op.apply(ta, tb).toFloatArray(), name + " n=" + n);
            assertArrayEquals(left, op.apply(ta.narrow(0, 0, 1), tb).toFloatArray(), name + " constant a, n=" + n);
            assertArrayEquals(right, op.apply(ta, tb.narrow(0, 0, 1)).toFloatArray(), name + " constant b, n=" + n);
        }
    }

    @Test
    void everyOperatorMatchesScalarArithmeticBitForBit() {
        check("add", Tensor::add, (x, y) -> x + y);
        check("sub", Tensor::sub, (x, y) -> x - y);
        check("mul", Tensor::mul, (x, y) -> x * y);
        check("div", Tensor::div, (x, y) -> x / y);
    }

    @Test
    void reluBackwardPassesGradientsWhereTheOutputIsPositive() {
        for (int n : new int[] {5, 16, 37, 1000}) {
            Tensor x = Tensor.randn(new Generator(n), DType.FLOAT32, n).requiresGrad(true);
            Tensor g = Tensor.randn(new Generator(n + 7), DType.FLOAT32, n);
            x.relu().backward(g);
            float[] xs = x.detach().toFloatArray();
            float[] gs = g.toFloatArray();
            float[] got = x.grad().toFloatArray();
            for (int i = 0; i < n; i++) {
                assertEquals(xs[i] > 0 ? gs[i] : 0f, got[i], "element " + i + " of " + n);
            }
        }
    }
}
