package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Shapes;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The factories behind {@code Tensor.of}, {@code arange}, {@code linspace}, {@code eye} and the random ones. */
final class Factories {
    private Factories() {
    }

    /** A copy of the Java array {@code data} of {@code length} elements, as {@code layout}, in a new tensor. */
    static Tensor of(Object data, int length, DType dtype, ValueLayout layout, int[] shape) {
        Tensor t = Tensor.empty(dtype, shapeFor(length, shape));
        MemorySegment.copy(data, 0, t.storage().segment(), layout, 0, length);
        return t;
    }

    static Tensor of(boolean[] data, int[] shape) {
        Tensor t = Tensor.empty(DType.BOOL, shapeFor(data.length, shape));
        MemorySegment s = t.storage().segment();
        for (int i = 0; i < data.length; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (data[i] ? 1 : 0));
        }
        return t;
    }

    private static int[] shapeFor(int length, int[] shape) {
        int[] s = shape.length == 0 ? new int[] {length} : shape.clone();
        if (Shapes.numel(s) != length) {
            throw new IllegalArgumentException("shape " + Shapes.str(s) + " holds " + Shapes.numel(s)
                    + " elements but " + length + " values were given");
        }
        return s;
    }

    static Tensor arange(double start, double end, double step, DType dtype) {
        if (step == 0 || Double.isNaN(step)) {
            throw new IllegalArgumentException("arange step must be non-zero, got " + step);
        }
        if (!Double.isFinite(start) || !Double.isFinite(end)) {
            throw new IllegalArgumentException("arange: unsupported range " + start + " -> " + end
                    + "; bounds must be finite");
        }
        if ((end - start) * step < 0) {
            throw new IllegalArgumentException("arange: upper bound and larger bound inconsistent with step sign"
                    + " (start=" + start + ", end=" + end + ", step=" + step + ")");
        }
        int n = (int) Math.ceil((end - start) / step);
        Tensor t = Tensor.empty(dtype, n);
        MemorySegment s = t.storage().segment();
        for (int i = 0; i < n; i++) {
            Access.setDouble(s, dtype, i, start + i * step);
        }
        return t;
    }

    static Tensor linspace(double start, double end, int steps, DType dtype) {
        if (steps < 0) {
            throw new IllegalArgumentException("linspace needs steps >= 0, got " + steps);
        }
        Tensor t = Tensor.empty(dtype, steps);
        MemorySegment s = t.storage().segment();
        double step = steps > 1 ? (end - start) / (steps - 1) : 0;
        int half = steps / 2;
        for (int i = 0; i < steps; i++) {
            // Fill from both ends as PyTorch does, so the last value is exactly end.
            double v = i < half ? start + step * i : end - step * (steps - 1 - i);
            Access.setDouble(s, dtype, i, v);
        }
        return t;
    }

    static Tensor eye(int n, int m, DType dtype) {
        if (n < 0 || m < 0) {
            throw new IllegalArgumentException("eye needs non-negative sizes, got " + n + " x " + m);
        }
        Tensor t = Tensor.empty(dtype, n, m);
        for (int i = 0; i < Math.min(n, m); i++) {
            Access.setDouble(t.storage().segment(), dtype, (long) i * m + i, 1.0);
        }
        return t;
    }

    static Tensor rand(Generator g, DType dtype, int... shape) {
        requireFloat("rand", dtype);
        Tensor t = Tensor.empty(dtype, shape);
        MemorySegment s = t.storage().segment();
        int n = t.numel();
        // Multiples of 2^-digits: exactly representable in the dtype, so rounding never reaches 1.0.
        double scale = Math.scalb(1.0, mantissaDigits(dtype));
        for (int i = 0; i < n; i++) {
            Access.setDouble(s, dtype, i, Math.floor(g.nextDouble() * scale) / scale);
        }
        return t;
    }

    private static int mantissaDigits(DType dtype) {
        return switch (dtype) {
            case FLOAT64 -> 53;
            case FLOAT32 -> 24;
            case FLOAT16 -> 11;
            default -> 8;
        };
    }

    static Tensor randn(Generator g, DType dtype, int... shape) {
        requireFloat("randn", dtype);
        Tensor t = Tensor.empty(dtype, shape);
        MemorySegment s = t.storage().segment();
        int n = t.numel();
        for (int i = 0; i < n; i++) {
            Access.setDouble(s, dtype, i, g.nextGaussian());
        }
        return t;
    }

    static Tensor randint(Generator g, long low, long high, int... shape) {
        if (low >= high) {
            throw new IllegalArgumentException("randint needs low < high, got low=" + low + " high=" + high);
        }
        Tensor t = Tensor.empty(DType.INT64, shape);
        MemorySegment s = t.storage().segment();
        int n = t.numel();
        for (int i = 0; i < n; i++) {
            Access.setLong(s, DType.INT64, i, g.nextLong(low, high));
        }
        return t;
    }

    static Tensor randperm(Generator g, int n) {
        if (n < 0) {
            throw new IllegalArgumentException("randperm needs n >= 0, got " + n);
        }
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = (int) g.nextLong(0, i + 1);
            long tmp = p[i];
            p[i] = p[j];
            p[j] = tmp;
        }
        return Tensor.of(p);
    }

    private static void requireFloat(String op, DType dtype) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException(op + " needs a floating dtype, got " + dtype);
        }
    }
}
