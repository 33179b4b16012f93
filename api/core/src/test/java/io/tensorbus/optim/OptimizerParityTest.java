package io.tensorbus.optim;

import static io.tensorbus.optim.OptimTesting.assertClose;
import static io.tensorbus.optim.OptimTesting.npy;

import io.tensorbus.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Parameter values after each of five steps, with fixed gradients, against PyTorch 1.13's optimizers (data
 * and options from tools/make_optim_data.py, in src/test/resources/optim).
 */
class OptimizerParityTest {
    @TestFactory
    @SuppressWarnings("unchecked")
    Stream<DynamicTest> everyCaseMatchesPyTorch() {
        List<Object> cases = (List<Object>) OptimTesting.json("cases.json");
        return cases.stream().map(o -> (Map<String, Object>) o)
                .map(c -> DynamicTest.dynamicTest((String) c.get("name"), () -> replay(c)));
    }

    @SuppressWarnings("unchecked")
    private static void replay(Map<String, Object> c) {
        Path dir = OptimTesting.dataDir().resolve((String) c.get("name"));
        List<Tensor> params = List.of(npy(dir.resolve("init_0.npy")), npy(dir.resolve("init_1.npy")));
        params.forEach(p -> p.requiresGrad(true));
        Optimizer opt = OptimTesting.create((String) c.get("optimizer"),
                groups(params, (Map<String, Object>) c.get("defaults"), (List<Object>) c.get("groups")));
        int steps = ((Number) c.get("steps")).intValue();
        for (int s = 0; s < steps; s++) {
            for (int i = 0; i < params.size(); i++) {
                Path g = dir.resolve("grad_" + s + "_" + i + ".npy");
                params.get(i).setGrad(Files.exists(g) ? npy(g) : null);
            }
            opt.step();
            for (int i = 0; i < params.size(); i++) {
                assertClose(npy(dir.resolve("param_" + s + "_" + i + ".npy")), params.get(i),
                        c.get("name") + " step " + s + " param " + i);
            }
        }
    }

    /** One group of both parameters, or one group per parameter with its overrides; options by PyTorch name. */
    @SuppressWarnings("unchecked")
    private static List<ParamGroup> groups(List<Tensor> params, Map<String, Object> defaults, List<Object> overrides) {
        List<ParamGroup> out = new ArrayList<>();
        if (overrides == null) {
            out.add(ParamGroup.of(params));
        } else {
            for (int i = 0; i < params.size(); i++) {
                ParamGroup g = ParamGroup.of(params.get(i));
                ((Map<String, Object>) overrides.get(i)).forEach(g::set);
                out.add(g);
            }
        }
        for (ParamGroup g : out) {
            defaults.forEach((k, v) -> {
                if (!g.has(k)) {
                    g.set(k, v);
                }
            });
        }
        return out;
    }
}
