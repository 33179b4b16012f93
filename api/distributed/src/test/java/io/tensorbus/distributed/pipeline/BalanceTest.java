package io.tensorbus.distributed.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.nn.BatchNorm2d;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.Sequential;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BalanceTest {
    /** The largest stage of the best cut of {@code costs[from..]} into {@code k} stages, by trying every cut. */
    private static double bruteForce(double[] costs, int from, int k) {
        if (k == 1) {
            double sum = 0;
            for (int i = from; i < costs.length; i++) {
                sum += costs[i];
            }
            return sum;
        }
        double best = Double.POSITIVE_INFINITY;
        double first = 0;
        for (int end = from + 1; end <= costs.length - (k - 1); end++) {
            first += costs[end - 1];
            best = Math.min(best, Math.max(first, bruteForce(costs, end, k - 1)));
        }
        return best;
    }

    private static double largestStage(double[] costs, int[] balance) {
        double largest = 0;
        int i = 0;
        for (int b : balance) {
            double sum = 0;
            for (int j = 0; j < b; j++) {
                sum += costs[i++];
            }
            largest = Math.max(largest, sum);
        }
        assertEquals(costs.length, i, "the balance covers every layer");
        return largest;
    }

    @Test
    void byCostFindsTheCutWhoseSlowestStageIsFastest() {
        assertArrayEquals(new int[] {2, 2}, Balance.byCost(2, new double[] {1, 1, 1, 1}));
        assertArrayEquals(new int[] {1, 5}, Balance.byCost(2, new double[] {5, 1, 1, 1, 1, 1}));
        assertArrayEquals(new int[] {3}, Balance.byCost(1, new double[] {1, 2, 3}));
        Random random = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            double[] costs = random.doubles(1 + random.nextInt(9), 0, 10).toArray();
            int k = 1 + random.nextInt(costs.length);
            int[] balance = Balance.byCost(k, costs);
            assertEquals(k, balance.length);
            for (int b : balance) {
                assertTrue(b >= 1, "every stage has a layer");
            }
            assertEquals(bruteForce(costs, 0, k), largestStage(costs, balance), 1e-9, "trial " + trial);
        }
    }

    @Test
    void badPartitionsAndCostsAreRefused() {
        var e = assertThrows(IllegalArgumentException.class, () -> Balance.byCost(3, new double[] {1, 1}));
        assertEquals("partitions must be 1 to the 2 layers, got 3", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Balance.byCost(0, new double[] {1}));
        e = assertThrows(IllegalArgumentException.class, () -> Balance.byCost(1, new double[] {1, Double.NaN}));
        assertEquals("cost of layer 1 must be finite and >= 0, got NaN", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Balance.byCost(1, new double[] {-1}));
    }

    /** A layer that takes {@code millis} in its forward and passes its input on (a pipeline stage in PipelineTest). */
    static final class Slow extends Module {
        private final long millis;

        Slow(long millis) {
            this.millis = millis;
        }

        @Override
        public Tensor forward(Tensor x) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return x.mul(1f);
        }
    }

    @Test
    void byTimeGivesTheSlowLayerAStageOfItsOwnAndLeavesTheModelAsItWas() {
        BatchNorm2d bn = new BatchNorm2d(2);
        Sequential model = new Sequential(bn, new Slow(1), new Slow(1), new Slow(1), new Slow(40));
        Tensor sample = Tensor.randn(new Generator(1), DType.FLOAT32, 4, 2, 3, 3).add(5f);
        float[] mean = bn.buffers().getFirst().toFloatArray();
        assertArrayEquals(new int[] {4, 1}, Balance.byTime(2, model, sample, Duration.ofMillis(100)));
        assertArrayEquals(mean, bn.buffers().getFirst().toFloatArray(), "running statistics restored");
        for (Tensor p : model.parameters()) {
            assertNull(p.grad(), "gradients cleared");
        }
    }

    @Test
    void splitMakesStagesThatShareTheModelsLayers() {
        Slow a = new Slow(0);
        Slow b = new Slow(0);
        Slow c = new Slow(0);
        List<Sequential> stages = Balance.split(new Sequential(a, b, c), new int[] {2, 1});
        assertEquals(2, stages.size());
        assertSame(a, stages.get(0).get(0));
        assertSame(b, stages.get(0).get(1));
        assertSame(c, stages.get(1).get(0));
        var e = assertThrows(IllegalArgumentException.class, () -> Balance.split(new Sequential(a, b), new int[] {3}));
        assertEquals("balance [3] covers 3 layers, the model has 2", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Balance.split(new Sequential(a, b), new int[] {2, 0}));
    }
}
