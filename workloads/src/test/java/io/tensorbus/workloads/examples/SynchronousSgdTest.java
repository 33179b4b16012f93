package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The tutorial's synchronous SGD keeps every rank's model identical. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SynchronousSgdTest {
    @Test
    void afterOneStepEveryRankHoldsTheSameParametersAndAFiniteLoss() {
        // 128 samples over 2 ranks: partitions of 64, batches of 64, so exactly one step.
        SynchronousSgd.Options options = new SynchronousSgd.Options(1, 128);
        AtomicReferenceArray<SynchronousSgd.Result> results = new AtomicReferenceArray<>(2);
        AtomicReferenceArray<String> printed = new AtomicReferenceArray<>(2);
        Distributed.spawn(2, pg -> {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            results.set(pg.rank(), SynchronousSgd.run(pg, options, new PrintStream(buf, true, StandardCharsets.UTF_8)));
            printed.set(pg.rank(), buf.toString(StandardCharsets.UTF_8));
        });
        Map<String, Tensor> initial = new MnistNet(new Generator(SynchronousSgd.SEED)).namedParameters();
        Map<String, Tensor> rank0 = results.get(0).model().namedParameters();
        Map<String, Tensor> rank1 = results.get(1).model().namedParameters();
        assertEquals(initial.keySet(), rank0.keySet());
        boolean changed = false;
        for (String name : rank0.keySet()) {
            float[] a = rank0.get(name).toFloatArray();
            assertArrayEquals(a, rank1.get(name).toFloatArray(), "parameter " + name + " differs between the ranks");
            changed |= !Arrays.equals(a, initial.get(name).toFloatArray());
        }
        assertTrue(changed, "the step changed no parameter");
        for (int r = 0; r < 2; r++) {
            SynchronousSgd.Result res = results.get(r);
            assertEquals(1, res.steps(), "rank " + r);
            double loss = res.epochLosses()[0];
            assertTrue(Double.isFinite(loss) && loss > 0, "rank " + r + " loss " + loss);
            assertTrue(printed.get(r).startsWith("Rank " + r + ", epoch 0: loss "), printed.get(r));
        }
        // Different partitions, different batches: the ranks' own losses differ.
        assertFalse(results.get(0).epochLosses()[0] == results.get(1).epochLosses()[0]);
    }

    @Test
    void averageGradientsDividesTheSumByTheWorldSize() {
        AtomicReferenceArray<List<float[]>> grads = new AtomicReferenceArray<>(4);
        Distributed.spawn(4, pg -> {
            MnistNet model = new MnistNet(new Generator(1));
            for (Tensor p : model.parameters()) {
                p.setGrad(Tensor.full(pg.rank(), DType.FLOAT32, p.shape()));
            }
            SynchronousSgd.averageGradients(model, pg);
            List<float[]> mine = new ArrayList<>();
            model.parameters().forEach(p -> mine.add(p.grad().toFloatArray()));
            grads.set(pg.rank(), mine);
        });
        for (int r = 0; r < 4; r++) {
            for (float[] g : grads.get(r)) {
                for (float v : g) {
                    assertEquals(1.5f, v, 0f); // (0 + 1 + 2 + 3) / 4
                }
            }
        }
    }

    @Test
    void twoEpochsOverFourRanksTakeTheSameStepsEverywhere() {
        SynchronousSgd.Options options = new SynchronousSgd.Options(2, 256);
        AtomicReferenceArray<SynchronousSgd.Result> results = new AtomicReferenceArray<>(4);
        Distributed.spawn(4, pg -> results.set(pg.rank(), SynchronousSgd.run(pg, options,
                PointToPointExamplesTest.nowhere())));
        // 256 samples over 4 ranks: 64 each, batches of 32, 2 per epoch.
        float[] reference = results.get(0).model().parameters().get(0).toFloatArray();
        for (int r = 0; r < 4; r++) {
            assertEquals(4, results.get(r).steps());
            assertArrayEquals(reference, results.get(r).model().parameters().get(0).toFloatArray(), "rank " + r);
            for (double loss : results.get(r).epochLosses()) {
                assertTrue(Double.isFinite(loss), "rank " + r + " loss " + loss);
            }
        }
    }

    @Test
    void parsesEpochsAndLimit() {
        assertEquals(new SynchronousSgd.Options(1, 0), SynchronousSgd.parse(new String[0]));
        assertEquals(new SynchronousSgd.Options(3, 500),
                SynchronousSgd.parse(new String[] {"--epochs", "3", "--limit", "500"}));
        assertThrows(IllegalArgumentException.class, () -> SynchronousSgd.parse(new String[] {"--epochs", "0"}));
        assertThrows(IllegalArgumentException.class, () -> SynchronousSgd.parse(new String[] {"--limit"}));
        assertThrows(IllegalArgumentException.class, () -> SynchronousSgd.parse(new String[] {"--limit", "x"}));
        assertThrows(IllegalArgumentException.class, () -> SynchronousSgd.parse(new String[] {"--lr", "1"}));
    }
}
