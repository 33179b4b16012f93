package io.tensorbus.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.internal.io.Json;
import io.tensorbus.io.Npy;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** Shared helpers of the optimizer tests: the PyTorch reference data and float comparisons. */
final class OptimTesting {
    static final double RTOL = 1e-5;
    static final double ATOL = 1e-6;

    private OptimTesting() {
    }

    /** The folder of the data written by tools/make_optim_data.py. */
    static Path dataDir() {
        URL url = OptimTesting.class.getResource("/optim/cases.json");
        if (url == null) {
            throw new IllegalStateException("optim/cases.json is missing from the test resources; run"
                    + " /usr/bin/python3 tools/make_optim_data.py");
        }
        try {
            return Path.of(url.toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object json(String name) {
        Path file = dataDir().resolve(name);
        try {
            return Json.parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Tensor npy(Path file) {
        try {
            return Npy.read(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Asserts {@code |actual - expected| <= atol + rtol * |expected|} elementwise, with equal shapes. */
    static void assertClose(Tensor expected, Tensor actual, String what) {
        assertEquals(Arrays.toString(expected.shape()), Arrays.toString(actual.shape()), what + ": shape");
        double[] e = expected.toDoubleArray();
        double[] a = actual.toDoubleArray();
        for (int i = 0; i < e.length; i++) {
            if (!(Math.abs(a[i] - e[i]) <= ATOL + RTOL * Math.abs(e[i]))) {
                fail(what + ": element " + i + " is " + a[i] + ", PyTorch has " + e[i]);
            }
        }
    }

    /** Asserts two tensors hold exactly the same values. */
    static void assertSame(Tensor expected, Tensor actual, String what) {
        assertEquals(Arrays.toString(expected.shape()), Arrays.toString(actual.shape()), what + ": shape");
        assertEquals(Arrays.toString(expected.toDoubleArray()), Arrays.toString(actual.toDoubleArray()), what);
    }

    /** An optimizer by the names tools/make_optim_data.py uses, with all options given by the groups. */
    static Optimizer create(String name, List<ParamGroup> groups) {
        return switch (name) {
            case "sgd" -> SGD.builder().buildGroups(groups);
            case "adam" -> Adam.builder().buildGroups(groups);
            case "adamw" -> AdamW.builder().buildGroups(groups);
            case "adagrad" -> Adagrad.builder().buildGroups(groups);
            default -> throw new IllegalArgumentException("unknown optimizer " + name);
        };
    }
}
