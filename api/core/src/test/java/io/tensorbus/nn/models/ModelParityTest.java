package io.tensorbus.nn.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.internal.io.Json;
import io.tensorbus.io.SafeTensors;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Models built here against the same models in PyTorch 1.13 (tools/make_nn_data.py): weights loaded from
 * PyTorch's safetensors must give PyTorch's output, loss, gradients and BatchNorm running statistics.
 */
class ModelParityTest {
    private static final Path DIR = Path.of("src/test/resources/nn");

    private static Map<String, Tensor> load(String name) throws IOException {
        return SafeTensors.load(DIR.resolve(name));
    }

    private static void close(String what, Tensor expected, Tensor actual, double atol, double rtol) {
        assertArrayEquals(expected.shape(), actual.shape(), what + ": shape");
        float[] e = expected.toFloatArray();
        float[] a = actual.toFloatArray();
        double worst = 0;
        int at = -1;
        for (int i = 0; i < e.length; i++) {
            double excess = Math.abs(e[i] - a[i]) - (atol + rtol * Math.abs(e[i]));
            if (excess > worst) {
                worst = excess;
                at = i;
            }
        }
        int i = at;
        assertTrue(at < 0, () -> what + ": element " + i + " is " + a[i] + ", PyTorch has " + e[i]);
    }

    private static void compareAll(String what, Map<String, Tensor> expected, Map<String, Tensor> actual,
            double atol, double rtol) {
        assertEquals(expected.keySet(), actual.keySet(), what + ": keys");
        for (String k : expected.keySet()) {
            close(what + " " + k, expected.get(k), actual.get(k), atol, rtol);
        }
    }

    private static Map<String, Tensor> grads(Module m) {
        Map<String, Tensor> g = new LinkedHashMap<>();
        m.namedParameters().forEach((k, p) -> g.put(k, p.grad()));
        return g;
    }

    @Test
    void narrowResNet50MatchesPyTorchInTrainingAndInference() throws IOException {
        ResNet model = new ResNet(ResNet.Block.BOTTLENECK, new int[] {3, 4, 6, 3}, 10, 8, null);
        Module.LoadResult r = model.loadStateDict(load("resnet50_w8_init.safetensors"), true);
        assertTrue(r.missingKeys().isEmpty() && r.unexpectedKeys().isEmpty(), r.toString());
        Map<String, Tensor> io = load("resnet50_w8_io.safetensors");
        Tensor out = model.forward(io.get("x"));
        Tensor loss = Functional.crossEntropy(out, io.get("target"));
        loss.backward();
        close("output", io.get("out"), out, 1e-4, 1e-3);
        close("loss", io.get("loss"), loss.reshape(1), 1e-5, 1e-4);
        // Training-mode BatchNorm on small batches cancels most of each gradient, so float32 rounding shows:
        // PyTorch's own float32 gradients differ from its float64 ones by up to 2.8% (relative L2) here.
        relativeNorms("training gradient", load("resnet50_w8_grads.safetensors"), grads(model), 0.1);
        compareAll("state after a training step", load("resnet50_w8_after.safetensors"), model.stateDict(), 1e-5,
                1e-4);
        model.eval();
        model.zeroGrad();
        Map<String, Tensor> eval = load("resnet50_w8_eval.safetensors");
        Tensor evalOut = model.forward(io.get("x"));
        Functional.crossEntropy(evalOut, io.get("target")).backward();
        close("eval output", eval.get("out"), evalOut, 1e-4, 1e-3);
        compareAll("eval gradient", load("resnet50_w8_eval_grads.safetensors"), grads(model), 1e-5, 1e-3);
    }

    private static void relativeNorms(String what, Map<String, Tensor> expected, Map<String, Tensor> actual,
            double limit) {
        assertEquals(expected.keySet(), actual.keySet(), what + ": keys");
        for (String k : expected.keySet()) {
            Tensor e = expected.get(k);
            double rel = actual.get(k).sub(e).pow(2.0).sum().sqrt().item() / e.pow(2.0).sum().sqrt().item();
            assertTrue(rel < limit, what + " " + k + ": relative L2 difference " + rel);
        }
    }

    @Test
    void fullResNet50HasTorchvisionsStateDictKeysAndShapes() throws IOException {
        @SuppressWarnings("unchecked")
        List<List<Object>> keys = (List<List<Object>>) Json.parse(Files.readString(DIR.resolve("resnet50_keys.json")),
                "resnet50_keys.json");
        Map<String, Tensor> state = ResNet.resnet50(1000, null).stateDict();
        List<String> expectedNames = new ArrayList<>();
        for (List<Object> k : keys) {
            String name = (String) k.get(0);
            expectedNames.add(name);
            @SuppressWarnings("unchecked")
            int[] shape = ((List<Number>) k.get(1)).stream().mapToInt(Number::intValue).toArray();
            assertTrue(state.containsKey(name), "missing " + name);
            assertArrayEquals(shape, state.get(name).shape(), name);
        }
        assertEquals(expectedNames, List.copyOf(state.keySet()), "same keys in the same order");
    }

    @Test
    void tutorialNetMatchesPyTorch() throws IOException {
        MnistNet model = new MnistNet(null);
        model.loadStateDict(load("tutorial_net_init.safetensors"), true);
        model.eval();
        Map<String, Tensor> io = load("tutorial_net_io.safetensors");
        Tensor out = model.forward(io.get("x"));
        Tensor loss = Functional.nllLoss(out, io.get("target"));
        loss.backward();
        close("output", io.get("out"), out, 1e-5, 1e-4);
        close("loss", io.get("loss"), loss.reshape(1), 1e-6, 1e-5);
        compareAll("gradient", load("tutorial_net_grads.safetensors"), grads(model), 1e-6, 1e-4);
    }
}
