package io.tensorbus.distributed.pipeline;

import io.tensorbus.nn.Sequential;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How to cut a {@link Sequential} model into pipeline stages, as torchgpipe's {@code balance_by_time} and
 * {@code balance_by_size}: a balance is the number of consecutive layers each stage takes, chosen so that the slowest
 * stage, which sets the pipeline's pace, is as fast as any cut allows. {@link #byTime} measures each layer's
 * forward and backward on a sample batch; {@link #byCost} cuts given costs; {@link #split} makes the stages.
 */
public final class Balance {
    private Balance() {
    }

    /**
     * {@code balance_by_time}: times each layer's forward and backward on {@code sample} (once untimed so that the
     * JIT compiles them, then repeatedly until {@code timeout} has passed, at least once) and cuts the model by those
     * times. The model's parameters and buffers are restored afterwards and its gradients cleared.
     *
     * @return the layers of each of the {@code partitions} stages, in order, each at least 1
     * @throws IllegalArgumentException when {@code partitions} is not 1 to the number of layers, or the timeout is
     *     negative
     */
    public static int[] byTime(int partitions, Sequential model, Tensor sample, Duration timeout) {
        Objects.requireNonNull(sample, "sample");
        checkPartitions(partitions, model.size());
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        return byCost(partitions, layerSeconds(model, sample, timeout));
    }

    /**
     * The seconds each layer of {@code model} took, forward and backward, summed over the timed runs; see
     * {@link #byTime}.
     */
    static double[] layerSeconds(Sequential model, Tensor sample, Duration timeout) {
        Map<String, Tensor> saved = new LinkedHashMap<>();
        model.stateDict().forEach((name, t) -> saved.put(name, t.detach().clone()));
        double[] seconds = new double[model.size()];
        try {
            runLayers(model, sample, new double[model.size()]);
            long end = System.nanoTime() + timeout.toNanos();
            do {
                runLayers(model, sample, seconds);
            } while (System.nanoTime() < end);
        } finally {
            model.loadStateDict(saved, true);
            model.zeroGrad(true);
        }
        return seconds;
    }

    /** One pass, each layer alone: its forward on the previous layer's output, then the backward of its sum. */
    private static void runLayers(Sequential model, Tensor sample, double[] seconds) {
        Tensor x = sample;
        for (int i = 0; i < model.size(); i++) {
            Tensor in = x.detach().requiresGrad(true);
            long start = System.nanoTime();
            Tensor y = model.get(i).forward(in);
            y.sum().backward();
            seconds[i] += (System.nanoTime() - start) / 1e9;
            x = y.detach();
        }
    }

    /**
     * Cuts layers of the given costs into {@code partitions} runs of consecutive layers so that the largest run's
     * total is as small as it can be (torchgpipe's {@code balance_cost}); among equally good cuts, the one that gives
     * later stages fewer layers.
     *
     * @return the layers of each stage, in order, each at least 1
     * @throws IllegalArgumentException when {@code partitions} is not 1 to {@code costs.length}, or a cost is negative
     *     or not finite
     */
    public static int[] byCost(int partitions, double[] costs) {
        checkPartitions(partitions, costs.length);
        for (int i = 0; i < costs.length; i++) {
            if (!(costs[i] >= 0) || Double.isInfinite(costs[i])) {
                throw new IllegalArgumentException("cost of layer " + i + " must be finite and >= 0, got " + costs[i]);
            }
        }
        int n = costs.length;
        double[] prefix = new double[n + 1];
        for (int i = 0; i < n; i++) {
            prefix[i + 1] = prefix[i] + costs[i];
        }
        // best[k][i]: the smallest largest stage over the first i layers in k stages; cut[k][i]: where stage k begins.
        double[][] best = new double[partitions + 1][n + 1];
        int[][] cut = new int[partitions + 1][n + 1];
        for (double[] row : best) {
            Arrays.fill(row, Double.POSITIVE_INFINITY);
        }
        best[0][0] = 0;
        for (int k = 1; k <= partitions; k++) {
            for (int i = k; i <= n; i++) {
                for (int j = i - 1; j >= k - 1; j--) {
                    double worst = Math.max(best[k - 1][j], prefix[i] - prefix[j]);
                    if (worst < best[k][i]) {
                        best[k][i] = worst;
                        cut[k][i] = j;
                    }
                }
            }
        }
        int[] balance = new int[partitions];
        for (int k = partitions, i = n; k > 0; k--) {
            balance[k - 1] = i - cut[k][i];
            i = cut[k][i];
        }
        return balance;
    }

    /**
     * The stages of {@code model} for {@code balance}: the first {@code balance[0]} layers, then the next
     * {@code balance[1]}, and so on; they share the model's modules.
     *
     * @throws IllegalArgumentException when a count is below 1 or the counts do not add up to the model's layers
     */
    public static List<Sequential> split(Sequential model, int[] balance) {
        int total = 0;
        for (int b : balance) {
            if (b < 1) {
                throw new IllegalArgumentException("every stage needs at least one layer, got balance "
                        + Arrays.toString(balance));
            }
            total += b;
        }
        if (total != model.size()) {
            throw new IllegalArgumentException("balance " + Arrays.toString(balance) + " covers " + total
                    + " layers, the model has " + model.size());
        }
        List<Sequential> stages = new ArrayList<>();
        int from = 0;
        for (int b : balance) {
            stages.add(model.slice(from, from + b));
            from += b;
        }
        return stages;
    }

    private static void checkPartitions(int partitions, int layers) {
        if (partitions < 1 || partitions > layers) {
            throw new IllegalArgumentException("partitions must be 1 to the " + layers + " layers, got " + partitions);
        }
    }
}
