package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Determinism#useDeterministicAlgorithms}: training steps of the tutorial network give the same bits
 * from run to run, whatever the thread count, and however far the JIT compiler has got (the first run here is
 * partly interpreted, the later ones compiled).
 */
class DeterminismTest {
    private int threads;
    private boolean deterministic;

    @BeforeEach
    void remember() {
        threads = Threads.get();
        deterministic = Determinism.areDeterministicAlgorithmsEnabled();
    }

    @AfterEach
    void restore() {
        Threads.set(threads);
        Determinism.useDeterministicAlgorithms(deterministic);
    }

    /** Five SGD steps (momentum) of MnistNet on one batch of 64 with {@code n} threads: every parameter after. */
    private static List<int[]> train(int n) {
        Threads.set(n);
        MnistNet net = new MnistNet(new Generator(7));
        SGD sgd = SGD.builder().lr(0.05).momentum(0.5).build(net.parameters());
        Tensor x = Tensor.randn(new Generator(8), DType.FLOAT32, 64, 1, 28, 28);
        Tensor y = Tensor.randint(new Generator(9), 0, 10, 64);
        for (int step = 0; step < 5; step++) {
            sgd.zeroGrad();
            Functional.nllLoss(net.forward(x), y).backward();
            sgd.step();
        }
        List<int[]> bits = new ArrayList<>();
        for (Tensor p : net.parameters()) {
            float[] values = p.toFloatArray();
            int[] b = new int[values.length];
            for (int i = 0; i < b.length; i++) {
                b[i] = Float.floatToRawIntBits(values[i]);
            }
            bits.add(b);
        }
        return bits;
    }

    @Test
    void trainingStepsAreBitwiseIdenticalWhateverTheThreadCount() {
        Determinism.useDeterministicAlgorithms(true);
        List<int[]> first = train(1);
        for (int n : new int[] {2, 3, 1, 4, 2}) {
            List<int[]> again = train(n);
            assertEquals(first.size(), again.size());
            for (int p = 0; p < first.size(); p++) {
                assertArrayEquals(first.get(p), again.get(p), "parameter " + p + " with " + n + " threads");
            }
        }
    }

    @Test
    void transcendentalFunctionsAreStrictMathsWhenDeterministic() {
        Tensor x = Tensor.randn(new Generator(3), DType.FLOAT32, 4099).mul(3);
        Tensor positive = x.abs().add(1e-3);
        Determinism.useDeterministicAlgorithms(true);
        float[] in = x.toFloatArray();
        float[] pin = positive.toFloatArray();
        float[] exp = x.exp().toFloatArray();
        float[] log = positive.log().toFloatArray();
        float[] tanh = x.tanh().toFloatArray();
        for (int i = 0; i < in.length; i++) {
            assertEquals((float) StrictMath.exp(in[i]), exp[i], "exp of " + in[i]);
            assertEquals((float) StrictMath.log(pin[i]), log[i], "log of " + pin[i]);
            assertEquals((float) StrictMath.tanh(in[i]), tanh[i], "tanh of " + in[i]);
        }
    }
}
