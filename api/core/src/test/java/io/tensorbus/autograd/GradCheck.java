package io.tensorbus.autograd;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Finite-difference gradient check in float64, as {@code torch.autograd.gradcheck}: the analytical gradient
 * of {@code sum(f(inputs) * r)} for a fixed random {@code r} must match central differences.
 */
public final class GradCheck {
    private static final double EPS = 1e-6;
    private static final double ATOL = 1e-5;
    private static final double RTOL = 1e-4;

    private GradCheck() {
    }

    /** Random float64 normal tensor of a shape, from a fixed seed. */
    public static Tensor randn(long seed, int... shape) {
        return Tensor.randn(new Generator(seed), DType.FLOAT64, shape);
    }

    /** Random float64 tensor uniform in [lo, hi). */
    public static Tensor uniform(long seed, double lo, double hi, int... shape) {
        return Tensor.rand(new Generator(seed), DType.FLOAT64, shape).mul(hi - lo).add(lo);
    }

    /** Checks every input that is floating point; fails naming the op, input and element that disagree. */
    public static void check(String name, Function<List<Tensor>, Tensor> f, Tensor... inputs) {
        Tensor[] xs = new Tensor[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            xs[i] = inputs[i].dtype().isFloatingPoint()
                    ? inputs[i].detach().clone().requiresGrad(true) : inputs[i];
        }
        Tensor out = f.apply(List.of(xs));
        Tensor r = randn(99, out.shape());
        out.mul(r).sum().backward();
        for (int i = 0; i < xs.length; i++) {
            if (!xs[i].dtype().isFloatingPoint()) {
                continue;
            }
            assertNotNull(xs[i].grad(), name + ": input " + i + " got no gradient");
            double[] analytic = xs[i].grad().toDoubleArray();
            double[] numeric = numeric(f, xs, i, r);
            compare(name, i, analytic, numeric);
        }
    }

    private static double[] numeric(Function<List<Tensor>, Tensor> f, Tensor[] xs, int which, Tensor r) {
        Tensor[] probe = new Tensor[xs.length];
        for (int i = 0; i < xs.length; i++) {
            probe[i] = xs[i].detach().clone();
        }
        Tensor x = probe[which];
        int[] shape = x.shape();
        int n = x.numel();
        double[] g = new double[n];
        try (var ignored = Autograd.noGrad()) {
            for (int k = 0; k < n; k++) {
                int[] idx = unravel(k, shape);
                double orig = x.getDouble(idx);
                x.set(orig + EPS, idx);
                double plus = f.apply(List.of(probe)).mul(r).sum().item();
                x.set(orig - EPS, idx);
                double minus = f.apply(List.of(probe)).mul(r).sum().item();
                x.set(orig, idx);
                g[k] = (plus - minus) / (2 * EPS);
            }
        }
        return g;
    }

    private static int[] unravel(int k, int[] shape) {
        int[] idx = new int[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            idx[d] = k % shape[d];
            k /= shape[d];
        }
        return idx;
    }

    private static void compare(String name, int input, double[] a, double[] n) {
        for (int k = 0; k < a.length; k++) {
            if (Math.abs(a[k] - n[k]) > ATOL + RTOL * Math.abs(n[k]) || Double.isNaN(a[k]) != Double.isNaN(n[k])) {
                fail(name + ": gradient of input " + input + " differs at element " + k + ": analytical " + a[k]
                        + " vs numerical " + n[k] + "\nanalytical " + Arrays.toString(a) + "\nnumerical  "
                        + Arrays.toString(n));
            }
        }
    }
}
