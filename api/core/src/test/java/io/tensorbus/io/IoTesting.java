package io.tensorbus.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.function.Executable;

/** Helpers for the io tests: fixtures, tensors built from formulas, element-wise comparison. */
final class IoTesting {
    private IoTesting() {
    }

    /** A file under src/test/resources/io/ (written by tools/make_io_fixtures.py). */
    static Path fixture(String name) {
        URL url = IoTesting.class.getResource("/io/" + name);
        if (url == null) {
            throw new IllegalStateException("missing fixture io/" + name + "; run tools/make_io_fixtures.py");
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A tensor of any dtype whose element at flat row-major index i is {@code f(i)}. */
    static Tensor tensor(DType dtype, IntToDoubleFunction f, int... shape) {
        Tensor t = Tensor.empty(dtype, shape);
        int n = t.numel();
        for (int i = 0; i < n; i++) {
            t.set(f.applyAsDouble(i), index(i, shape));
        }
        return t;
    }

    /** The elements in row-major order, read one by one (works for every dtype and layout). */
    static double[] values(Tensor t) {
        int[] shape = t.shape();
        double[] out = new double[t.numel()];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.getDouble(index(i, shape));
        }
        return out;
    }

    private static int[] index(int flat, int[] shape) {
        int[] idx = new int[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
        return idx;
    }

    /** Asserts dtype, shape and every element against {@code f(flat index)}. */
    static void assertTensor(Tensor t, DType dtype, int[] shape, IntToDoubleFunction f) {
        assertEquals(dtype, t.dtype(), "dtype");
        assertArrayEquals(shape, t.shape(), "shape");
        double[] v = values(t);
        for (int i = 0; i < v.length; i++) {
            assertEquals(f.applyAsDouble(i), v[i], 0.0, "element " + i);
        }
    }

    /** Asserts that two tensors have the same dtype, shape and elements. */
    static void assertSameTensor(Tensor expected, Tensor actual) {
        assertEquals(expected.dtype(), actual.dtype(), "dtype");
        assertArrayEquals(expected.shape(), actual.shape(), "shape");
        assertArrayEquals(values(expected), values(actual), 0.0, "elements");
    }

    /** Asserts that running {@code body} throws a TensorFormatException whose message contains each part. */
    static TensorFormatException assertFormatError(Executable body, String... parts) {
        TensorFormatException e = assertThrows(TensorFormatException.class, body);
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' lacks '" + p + "'");
        }
        return e;
    }
}
