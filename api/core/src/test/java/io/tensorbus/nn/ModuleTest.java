package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ModuleTest {
    private static Sequential small() {
        return new Sequential(new Conv2d(1, 2, 3, 1, 1), new BatchNorm2d(2), new ReLU(), new Flatten(),
                new Linear(2 * 4 * 4, 3));
    }

    @Test
    void stateDictUsesPyTorchKeysInRegistrationOrder() {
        assertEquals(List.of("0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                "1.num_batches_tracked", "4.weight", "4.bias"), List.copyOf(small().stateDict().keySet()));
        assertEquals(List.of("0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias"),
                List.copyOf(small().namedParameters().keySet()));
        Map<String, Tensor> resnet = ResNet.resnet18(10, new Generator(0)).stateDict();
        assertTrue(resnet.containsKey("layer2.0.downsample.1.running_var"));
        assertTrue(resnet.containsKey("fc.bias"));
    }

    @Test
    void loadStateDictCopiesValuesAndReportsKeyMismatches() {
        Sequential a = small();
        Sequential b = small();
        b.loadStateDict(a.stateDict(), true);
        assertArrayEquals(a.stateDict().get("4.weight").toFloatArray(), b.stateDict().get("4.weight").toFloatArray());
        Map<String, Tensor> partial = new LinkedHashMap<>(a.stateDict());
        partial.remove("0.bias");
        partial.put("extra.weight", Tensor.zeros(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.loadStateDict(partial, true));
        assertTrue(e.getMessage().contains("missing keys [0.bias]"), e.getMessage());
        assertTrue(e.getMessage().contains("unexpected keys [extra.weight]"), e.getMessage());
        Module.LoadResult r = b.loadStateDict(partial, false);
        assertEquals(List.of("0.bias"), r.missingKeys());
        assertEquals(List.of("extra.weight"), r.unexpectedKeys());
    }

    @Test
    void loadStateDictRefusesAShapeMismatchNamingTheKey() {
        Map<String, Tensor> state = new LinkedHashMap<>(small().stateDict());
        state.put("4.weight", Tensor.zeros(3, 5));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> small().loadStateDict(state, true));
        assertTrue(e.getMessage().contains("4.weight") && e.getMessage().contains("[3, 5]")
                && e.getMessage().contains("[3, 32]"), e.getMessage());
    }

    @Test
    void layersNameThemselvesAndBothShapesOnBadInput() {
        IllegalArgumentException lin = assertThrows(IllegalArgumentException.class,
                () -> new Linear(4, 2).forward(Tensor.zeros(3, 5)));
        assertTrue(lin.getMessage().contains("Linear(in_features=4, out_features=2")
                && lin.getMessage().contains("[3, 5]"),
                lin.getMessage());
        IllegalArgumentException conv = assertThrows(IllegalArgumentException.class,
                () -> new Conv2d(3, 8, 3, 1, 1).forward(Tensor.zeros(1, 4, 8, 8)));
        assertTrue(conv.getMessage().contains("Conv2d(3, 8") && conv.getMessage().contains("[N, 3, H, W]")
                && conv.getMessage().contains("[1, 4, 8, 8]"), conv.getMessage());
        IllegalArgumentException bn = assertThrows(IllegalArgumentException.class,
                () -> new BatchNorm2d(4).forward(Tensor.zeros(2, 3, 2, 2)));
        assertTrue(bn.getMessage().contains("BatchNorm2d(4") && bn.getMessage().contains("[2, 3, 2, 2]"),
                bn.getMessage());
        IllegalArgumentException net = assertThrows(IllegalArgumentException.class,
                () -> new MnistNet(null).forward(Tensor.zeros(1, 1, 32, 32)));
        assertTrue(net.getMessage().contains("[N, 1, 28, 28]") && net.getMessage().contains("[1, 1, 32, 32]"));
    }

    @Test
    void trainAndEvalReachEveryModuleAndChangeBatchNormAndDropout() {
        Sequential m = new Sequential(new BatchNorm2d(1), new Dropout(0.5));
        Tensor x = Tensor.randn(new Generator(1), DType.FLOAT32, 4, 1, 2, 2);
        m.eval();
        assertFalse(m.get(0).isTraining() || m.get(1).isTraining());
        assertArrayEquals(x.div(Math.sqrt(1 + 1e-5)).toFloatArray(), m.forward(x).toFloatArray(), 1e-6f);
        m.train();
        m.forward(x);
        assertEquals(1, m.stateDict().get("0.num_batches_tracked").longItem());
        assertTrue(m.get(1).isTraining());
    }

    @Test
    void zeroGradClearsOrZeroesEveryGradient() {
        Sequential m = small();
        m.forward(Tensor.randn(2, 1, 4, 4)).sum().backward();
        m.zeroGrad(false);
        for (Tensor p : m.parameters()) {
            assertEquals(0, p.grad().abs().sum().item());
        }
        m.zeroGrad(true);
        for (Tensor p : m.parameters()) {
            assertNull(p.grad());
        }
    }

    @Test
    void defaultInitialisationsFollowPyTorch() {
        Linear lin = new Linear(100, 50, true, new Generator(3));
        double bound = 1 / Math.sqrt(100);
        assertTrue(lin.weight().abs().max().item() <= bound + 1e-6);
        assertTrue(lin.bias().abs().max().item() <= bound + 1e-6);
        ResNet r = ResNet.resnet18(10, new Generator(4));
        Tensor w = r.namedParameters().get("layer1.0.conv1.weight");
        double std = Math.sqrt(w.pow(2.0).mean().item());
        assertEquals(Math.sqrt(2.0 / (64 * 9)), std, 0.005);
        assertEquals(1.0, r.namedParameters().get("layer1.0.bn1.weight").mean().item(), 0);
    }

    @Test
    void printsAsAModuleTree() {
        String s = new Sequential(new Linear(2, 3, false, null), new ReLU()).toString();
        assertEquals("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=False)\n  (1): ReLU()\n)", s);
    }

    @Test
    void badLayerArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Linear(0, 2));
        assertThrows(IllegalArgumentException.class, () -> new Conv2d(3, 8, new int[] {3, 3}, new int[] {1, 1},
                new int[] {1, 1}, new int[] {1, 1}, 2, true, null));
        assertThrows(IllegalArgumentException.class, () -> new BatchNorm2d(0));
        assertThrows(IllegalArgumentException.class, () -> new Dropout(1.5));
        assertThrows(IllegalArgumentException.class, () -> new MaxPool2d(2, 2, 2, false));
        assertThrows(IllegalArgumentException.class, () -> new ResNet(ResNet.Block.BASIC, new int[] {1, 1}, 10, 64,
                null));
    }
}
