package io.tensorbus.distributed.autograd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.io.SafeTensors;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/** The values {@code tools/make_dist_autograd_data.py} made with PyTorch's distributed autograd, and comparisons. */
public final class Golden {
    private Golden() {
    }

    /** The tensors of {@code dist_autograd/<name>} on the test class path. */
    public static Map<String, Tensor> load(String name) throws IOException {
        try (InputStream in = Golden.class.getResourceAsStream("/dist_autograd/" + name)) {
            assertNotNull(in, name + " is missing: run /usr/bin/python3 tools/make_dist_autograd_data.py");
            return SafeTensors.load(in.readAllBytes());
        }
    }

    /** {@code actual} equals {@code expected} within float32 tolerance (1e-5 relative, 1e-6 absolute). */
    public static void close(Tensor expected, Tensor actual, String what) {
        assertNotNull(actual, what + " is missing");
        assertArrayEquals(expected.shape(), actual.shape(), what + ": shape");
        float[] e = expected.toFloatArray();
        float[] a = actual.toFloatArray();
        for (int i = 0; i < e.length; i++) {
            float tol = 1e-6f + 1e-5f * Math.abs(e[i]);
            assertTrue(Math.abs(e[i] - a[i]) <= tol, what + "[" + i + "]: expected " + e[i] + ", got " + a[i]);
        }
    }
}
