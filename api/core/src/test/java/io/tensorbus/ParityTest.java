package io.tensorbus;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.io.Json;
import io.tensorbus.io.Npy;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Reduction;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * Numeric parity with PyTorch 1.13: every case of {@code parity/cases.json} (written with its {@code .npy}
 * inputs, outputs and gradients by {@code tools/make_parity_data.py}) runs the same op in tensorbus,
 * backpropagates the same upstream gradient and compares the output, every input gradient and any state
 * updated in place (batch-norm running statistics) with {@code |actual - expected| <= atol + rtol * |expected|}.
 *
 * <p>The case parameters are interpreted exactly as {@code torch_op} in the generator does.
 */
class ParityTest {

    private static final Set<String> ELEMENTWISE = Set.of("add", "sub", "mul", "div");
    private static final Set<String> UNARY = Set.of("neg", "exp", "log", "pow", "sqrt", "abs", "clamp", "relu",
            "sigmoid", "tanh");
    private static final Set<String> PRODUCTS = Set.of("matmul", "mm", "bmm", "linear");
    private static final Set<String> REDUCTIONS = Set.of("sum", "mean", "max", "min", "argmax");
    private static final Set<String> SOFTMAX = Set.of("softmax", "log_softmax");
    private static final Set<String> CONV = Set.of("conv2d");
    private static final Set<String> POOLING = Set.of("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d");
    private static final Set<String> BATCH_NORM = Set.of("batch_norm");
    private static final Set<String> VIEWS = Set.of("flatten", "view", "reshape", "transpose", "t", "permute",
            "narrow", "slice", "select", "expand", "squeeze", "unsqueeze");
    private static final Set<String> JOINS = Set.of("cat", "stack", "split", "chunk");
    private static final Set<String> INDEXING = Set.of("index_select", "gather", "scatter", "one_hot");
    private static final Set<String> LOSSES = Set.of("nll_loss", "cross_entropy", "mse_loss");
    private static final List<Set<String>> FAMILIES = List.of(ELEMENTWISE, UNARY, PRODUCTS, REDUCTIONS, SOFTMAX,
            CONV, POOLING, BATCH_NORM, VIEWS, JOINS, INDEXING, LOSSES);

    /** One entry of cases.json. */
    record Case(String name, String op, String dtype, List<String> inputs, List<String> grad,
            Map<String, Object> params, int outputs, boolean multi, List<Integer> used, List<String> extra,
            double rtol, double atol, String note, Path dir) {

        @Override
        public String toString() {
            return name + " (" + op + " " + dtype + " " + params + ")";
        }
    }

    /**
     * With {@code -Dparity.verbose=true}, prints the max abs difference of every comparison. With
     * {@code -Dparity.dir=/some/dir}, runs the cases of {@code /some/dir/cases.json} instead of the test
     * resources (for larger sweeps generated outside the repository).
     */
    private static final boolean VERBOSE = Boolean.getBoolean("parity.verbose");

    private static List<Case> cases;

    static synchronized List<Case> cases() {
        if (cases == null) {
            cases = load();
        }
        return cases;
    }

    @SuppressWarnings("unchecked")
    private static List<Case> load() {
        try {
            Path file;
            String dir = System.getProperty("parity.dir");
            if (dir != null && !dir.isBlank()) {
                file = Path.of(dir, "cases.json");
            } else {
                URL url = ParityTest.class.getResource("/parity/cases.json");
                if (url == null) {
                    throw new IllegalStateException("parity/cases.json is missing from the test resources; run"
                            + " /usr/bin/python3 tools/make_parity_data.py");
                }
                file = Path.of(url.toURI());
            }
            Map<String, Object> root = (Map<String, Object>) Json.parse(
                    Files.readString(file, StandardCharsets.UTF_8), file.toString());
            List<Case> out = new ArrayList<>();
            for (Object o : (List<Object>) root.get("cases")) {
                Map<String, Object> m = (Map<String, Object>) o;
                String name = (String) m.get("name");
                out.add(new Case(name, (String) m.get("op"), (String) m.get("dtype"),
                        (List<String>) m.get("inputs"), (List<String>) m.get("grad"),
                        (Map<String, Object>) m.get("params"), ((Number) m.get("outputs")).intValue(),
                        (Boolean) m.get("multi"),
                        ((List<Object>) m.get("used")).stream().map(n -> ((Number) n).intValue()).toList(),
                        (List<String>) m.get("extra"), ((Number) m.get("rtol")).doubleValue(),
                        ((Number) m.get("atol")).doubleValue(), (String) m.get("note"),
                        file.getParent().resolve(name)));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Stream<DynamicTest> family(Set<String> ops) {
        List<Case> selected = cases().stream().filter(c -> ops.contains(c.op())).toList();
        if (System.getProperty("parity.dir") == null) {
            assertFalse(selected.isEmpty(), "no parity case for ops " + ops);
        }
        return selected.stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> check(c)));
    }

    // ---------------------------------------------------------------- one test family per op group

    @Test
    void everyGeneratedCaseBelongsToATestedOpFamily() {
        List<String> orphans = cases().stream()
                .filter(c -> FAMILIES.stream().noneMatch(f -> f.contains(c.op())))
                .map(Case::name).toList();
        assertTrue(orphans.isEmpty(), "cases whose op no test runs: " + orphans);
        if (System.getProperty("parity.dir") == null) {
            assertTrue(cases().size() > 250, "expected the full case list, got " + cases().size());
        }
    }

    @TestFactory
    Stream<DynamicTest> broadcastingArithmeticMatchesPyTorchForwardAndGradients() {
        return family(ELEMENTWISE);
    }

    @TestFactory
    Stream<DynamicTest> unaryOpsMatchPyTorchForwardAndGradients() {
        return family(UNARY);
    }

    @TestFactory
    Stream<DynamicTest> matrixProductsMatchPyTorchForwardAndGradients() {
        return family(PRODUCTS);
    }

    @TestFactory
    Stream<DynamicTest> reductionsMatchPyTorchForwardAndGradients() {
        return family(REDUCTIONS);
    }

    @TestFactory
    Stream<DynamicTest> softmaxAndLogSoftmaxMatchPyTorchForwardAndGradients() {
        return family(SOFTMAX);
    }

    @TestFactory
    Stream<DynamicTest> conv2dMatchesPyTorchForwardAndGradients() {
        return family(CONV);
    }

    @TestFactory
    Stream<DynamicTest> poolingMatchesPyTorchForwardAndGradients() {
        return family(POOLING);
    }

    @TestFactory
    Stream<DynamicTest> batchNormMatchesPyTorchIncludingRunningStatistics() {
        return family(BATCH_NORM);
    }

    @TestFactory
    Stream<DynamicTest> viewsBackpropagateLikePyTorch() {
        return family(VIEWS);
    }

    @TestFactory
    Stream<DynamicTest> catStackSplitChunkBackpropagateLikePyTorch() {
        return family(JOINS);
    }

    @TestFactory
    Stream<DynamicTest> indexingOpsMatchPyTorchForwardAndGradients() {
        return family(INDEXING);
    }

    @TestFactory
    Stream<DynamicTest> lossesMatchPyTorchForwardAndGradients() {
        return family(LOSSES);
    }

    // ---------------------------------------------------------------- running one case

    private static Tensor read(Case c, String file) {
        try {
            return Npy.read(c.dir().resolve(file + ".npy"));
        } catch (IOException e) {
            throw new UncheckedIOException("case " + c.name() + ": cannot read " + file + ".npy", e);
        }
    }

    private static void check(Case c) {
        Map<String, Tensor> in = new LinkedHashMap<>();
        for (String n : c.inputs()) {
            Tensor t = read(c, n);
            if (c.grad().contains(n)) {
                t.requiresGrad(true);
            }
            in.put(n, t);
        }
        Object result;
        try {
            result = run(c, in);
        } catch (RuntimeException e) {
            throw new AssertionError("case " + c + ": forward threw " + e, e);
        }
        @SuppressWarnings("unchecked")
        List<Tensor> outs = c.multi() ? (List<Tensor>) result : List.of((Tensor) result);
        List<Executable> checks = new ArrayList<>();
        checks.add(() -> assertEquals(c.outputs(), outs.size(), "case " + c.name() + ": number of outputs"));
        for (int i = 0; i < Math.min(outs.size(), c.outputs()); i++) {
            String f = c.multi() ? "out" + i : "out";
            Tensor actual = outs.get(i);
            checks.add(() -> compare(c, f, read(c, f), actual));
        }
        if (!c.grad().isEmpty()) {
            RuntimeException backwardError = null;
            try {
                List<Tensor> roots = new ArrayList<>();
                List<Tensor> grads = new ArrayList<>();
                for (int i : c.used()) {
                    roots.add(outs.get(i));
                    grads.add(read(c, c.multi() ? "gy" + i : "gy"));
                }
                Autograd.backward(roots, grads, false);
            } catch (RuntimeException e) {
                backwardError = e;
            }
            if (backwardError != null) {
                RuntimeException e = backwardError;
                checks.add(() -> {
                    throw new AssertionError("case " + c + ": backward threw " + e, e);
                });
            } else {
                for (String n : c.grad()) {
                    Tensor g = in.get(n).grad();
                    Tensor expected = read(c, "g" + n);
                    checks.add(() -> {
                        if (g == null) {
                            assertTrue(Arrays.stream(expected.toDoubleArray()).allMatch(v -> v == 0), "case "
                                    + c.name() + ": gradient of " + n + " is null but PyTorch's is non-zero");
                        } else {
                            compare(c, "g" + n, expected, g);
                        }
                    });
                }
            }
        }
        for (String n : c.extra()) {
            checks.add(() -> compare(c, n + "_after", read(c, n + "_after"), in.get(n)));
        }
        assertAll("case " + c, checks);
    }

    /** Checks shape, dtype and values of {@code actual} against PyTorch's {@code expected}. */
    private static void compare(Case c, String what, Tensor expected, Tensor actual) {
        String where = "case " + c.name() + " [" + c.op() + " " + c.params() + "]"
                + (c.note() == null ? "" : " (PyTorch semantics: " + c.note() + ")") + ": " + what;
        assertEquals(Arrays.toString(expected.shape()), Arrays.toString(actual.shape()), where + ": shape");
        String dtypeProblem = expected.dtype() == actual.dtype() ? ""
                : "dtype differs from PyTorch: expected " + expected.dtype() + ", got " + actual.dtype() + "; ";
        double[] e = expected.toDoubleArray();
        double[] a = actual.toDoubleArray();
        double maxDiff = 0;
        double worstDiff = -1;
        int worst = -1;
        int bad = 0;
        for (int i = 0; i < e.length; i++) {
            boolean bothNaN = Double.isNaN(e[i]) && Double.isNaN(a[i]);
            double d = bothNaN || e[i] == a[i] ? 0 : Math.abs(a[i] - e[i]);
            if (Double.isNaN(d)) {
                d = Double.POSITIVE_INFINITY; // one side NaN
            }
            maxDiff = Math.max(maxDiff, d);
            if (d != 0 && !(d <= c.atol() + c.rtol() * Math.abs(e[i]))) {
                bad++;
                if (d > worstDiff) {
                    worstDiff = d;
                    worst = i;
                }
            }
        }
        if (VERBOSE) {
            System.out.printf(Locale.ROOT, "parity %-50s %-14s max abs diff %.3e%n", c.name(), what, maxDiff);
        }
        if (bad > 0) {
            fail(String.format(Locale.ROOT, "%s: %svalues differ from PyTorch: max abs diff %.3e, %d of %d elements"
                    + " outside rtol %.0e / atol %.0e; worst at flat index %d: expected %.9g, got %.9g", where,
                    dtypeProblem, maxDiff, bad, e.length, c.rtol(), c.atol(), worst, e[worst], a[worst]));
        }
        if (!dtypeProblem.isEmpty()) {
            fail(String.format(Locale.ROOT, "%s: %svalues match (max abs diff %.3e)", where, dtypeProblem, maxDiff));
        }
    }

    // ---------------------------------------------------------------- the ops, as torch_op in the generator

    private static int i(Object o) {
        return ((Number) o).intValue();
    }

    private static double d(Object o) {
        return ((Number) o).doubleValue();
    }

    @SuppressWarnings("unchecked")
    private static int[] ints(Object o) {
        return ((List<Object>) o).stream().mapToInt(ParityTest::i).toArray();
    }

    private static Object run(Case c, Map<String, Tensor> t) {
        Map<String, Object> p = c.params();
        Tensor x = t.get("x");
        if (p.containsKey("transpose_x")) {
            int[] d = ints(p.get("transpose_x"));
            x = x.transpose(d[0], d[1]);
        }
        Tensor y = Boolean.TRUE.equals(p.get("other_is_x")) ? x : t.get("other");
        if (y != null && p.containsKey("transpose_other")) {
            int[] d = ints(p.get("transpose_other"));
            y = y.transpose(d[0], d[1]);
        }
        boolean scalar = p.containsKey("scalar");
        double s = scalar ? d(p.get("scalar")) : 0;
        return switch (c.op()) {
            case "add" -> scalar ? x.add(s) : p.containsKey("alpha") ? x.add(y, d(p.get("alpha"))) : x.add(y);
            case "sub" -> scalar ? x.sub(s) : x.sub(y);
            case "mul" -> scalar ? x.mul(s) : x.mul(y);
            case "div" -> scalar ? x.div(s) : x.div(y);
            case "neg" -> x.neg();
            case "exp" -> x.exp();
            case "log" -> x.log();
            case "sqrt" -> x.sqrt();
            case "abs" -> x.abs();
            case "relu" -> x.relu();
            case "sigmoid" -> x.sigmoid();
            case "tanh" -> x.tanh();
            case "pow" -> p.containsKey("exponent") ? x.pow(d(p.get("exponent"))) : x.pow(y);
            case "clamp" -> x.clamp(p.get("min") == null ? Double.NEGATIVE_INFINITY : d(p.get("min")),
                    p.get("max") == null ? Double.POSITIVE_INFINITY : d(p.get("max")));
            case "matmul" -> x.matmul(y);
            case "mm" -> x.mm(y);
            case "bmm" -> x.bmm(y);
            case "sum" -> p.get("dims") == null ? x.sum() : x.sum(ints(p.get("dims")), (Boolean) p.get("keepdim"));
            case "mean" -> p.get("dims") == null ? x.mean() : x.mean(ints(p.get("dims")), (Boolean) p.get("keepdim"));
            case "max" -> p.get("dim") == null ? x.max() : x.max(i(p.get("dim")), (Boolean) p.get("keepdim"));
            case "min" -> p.get("dim") == null ? x.min() : x.min(i(p.get("dim")), (Boolean) p.get("keepdim"));
            case "argmax" -> p.get("dim") == null ? x.argmax() : x.argmax(i(p.get("dim")), (Boolean) p.get("keepdim"));
            case "softmax" -> x.softmax(i(p.get("dim")));
            case "log_softmax" -> x.logSoftmax(i(p.get("dim")));
            case "linear" -> Functional.linear(x, t.get("w"), t.get("b"));
            case "conv2d" -> Functional.conv2d(x, t.get("w"), t.get("b"), ints(p.get("stride")),
                    ints(p.get("padding")), ints(p.get("dilation")), i(p.get("groups")));
            case "max_pool2d" -> Functional.maxPool2d(x, ints(p.get("kernel")),
                    p.get("stride") == null ? null : ints(p.get("stride")), ints(p.get("padding")),
                    (Boolean) p.get("ceil_mode"));
            case "avg_pool2d" -> Functional.avgPool2d(x, ints(p.get("kernel")),
                    p.get("stride") == null ? null : ints(p.get("stride")), ints(p.get("padding")),
                    (Boolean) p.get("ceil_mode"), (Boolean) p.get("count_include_pad"));
            case "adaptive_avg_pool2d" -> {
                int[] o = ints(p.get("output_size"));
                yield Functional.adaptiveAvgPool2d(x, o[0], o[1]);
            }
            case "batch_norm" -> Functional.batchNorm(x, t.get("running_mean"), t.get("running_var"), t.get("w"),
                    t.get("b"), (Boolean) p.get("training"), d(p.get("momentum")), d(p.get("eps")));
            case "flatten" -> x.flatten(i(p.get("start")), i(p.get("end")));
            case "view" -> x.view(ints(p.get("shape")));
            case "reshape" -> x.reshape(ints(p.get("shape")));
            case "transpose" -> x.transpose(i(p.get("dim0")), i(p.get("dim1")));
            case "t" -> x.t();
            case "permute" -> x.permute(ints(p.get("dims")));
            case "narrow" -> x.narrow(i(p.get("dim")), i(p.get("start")), i(p.get("length")));
            case "slice" -> x.slice(i(p.get("dim")), i(p.get("start")), i(p.get("end")), i(p.get("step")));
            case "select" -> x.select(i(p.get("dim")), i(p.get("index")));
            case "expand" -> x.expand(ints(p.get("shape")));
            case "squeeze" -> p.get("dim") == null ? x.squeeze() : x.squeeze(i(p.get("dim")));
            case "unsqueeze" -> x.unsqueeze(i(p.get("dim")));
            case "cat" -> Tensor.cat(List.of(t.get("a"), t.get("b"), t.get("c")), i(p.get("dim")));
            case "stack" -> Tensor.stack(List.of(t.get("a"), t.get("b"), t.get("c")), i(p.get("dim")));
            case "split" -> p.containsKey("sizes") ? x.split(ints(p.get("sizes")), i(p.get("dim")))
                    : x.split(i(p.get("size")), i(p.get("dim")));
            case "chunk" -> x.chunk(i(p.get("chunks")), i(p.get("dim")));
            case "index_select" -> x.indexSelect(i(p.get("dim")), t.get("index"));
            case "gather" -> x.gather(i(p.get("dim")), t.get("index"));
            case "scatter" -> p.containsKey("value") ? x.scatter(i(p.get("dim")), t.get("index"), d(p.get("value")))
                    : x.scatter(i(p.get("dim")), t.get("index"), t.get("src"));
            case "one_hot" -> Functional.oneHot(t.get("idx"), i(p.get("num_classes")));
            case "nll_loss" -> Functional.nllLoss(x, t.get("target"), t.get("weight"), i(p.get("ignore_index")),
                    reduction(p));
            case "cross_entropy" -> Functional.crossEntropy(x, t.get("target"), t.get("weight"),
                    i(p.get("ignore_index")), reduction(p));
            case "mse_loss" -> Functional.mseLoss(x, t.get("target"), reduction(p));
            default -> throw new IllegalArgumentException("ParityTest does not know op " + c.op()
                    + "; add it to run() as torch_op in tools/make_parity_data.py");
        };
    }

    private static Reduction reduction(Map<String, Object> p) {
        return Reduction.valueOf(((String) p.get("reduction")).toUpperCase(Locale.ROOT));
    }
}
