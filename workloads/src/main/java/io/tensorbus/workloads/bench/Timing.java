package io.tensorbus.workloads.bench;

import java.util.Arrays;

/**
 * Times an operation the way the PyTorch anchors do (median of a few runs after a warm-up), with a longer
 * warm-up because the JIT compiles the kernels while they run, and with short operations repeated inside
 * each sample so that a sample is long enough to time.
 */
public final class Timing {
    private final double warmupSeconds;
    private final int samples;
    private final double minSampleSeconds;

    /**
     * @param warmupSeconds how long to run the operation before timing it (at least 3 runs in any case)
     * @param samples how many timed samples to take the median of, at least 1
     * @param minSampleSeconds the shortest a sample may be; short operations run several times per sample
     */
    public Timing(double warmupSeconds, int samples, double minSampleSeconds) {
        if (samples < 1 || warmupSeconds < 0 || minSampleSeconds < 0) {
            throw new IllegalArgumentException("timing needs samples >= 1 and non-negative durations, got warmup="
                    + warmupSeconds + " samples=" + samples + " minSample=" + minSampleSeconds);
        }
        this.warmupSeconds = warmupSeconds;
        this.samples = samples;
        this.minSampleSeconds = minSampleSeconds;
    }

    /** Warms {@code op} up, then returns the median time of one call in seconds. */
    public double medianSeconds(Runnable op) {
        long start = System.nanoTime();
        long last = 0;
        for (int runs = 0; runs < 3 || System.nanoTime() - start < warmupSeconds * 1e9; runs++) {
            long t0 = System.nanoTime();
            op.run();
            last = System.nanoTime() - t0;
        }
        int reps = (int) Math.max(1, Math.ceil(minSampleSeconds * 1e9 / Math.max(1, last)));
        double[] perCall = new double[samples];
        for (int s = 0; s < samples; s++) {
            long t0 = System.nanoTime();
            for (int r = 0; r < reps; r++) {
                op.run();
            }
            perCall[s] = (System.nanoTime() - t0) / 1e9 / reps;
        }
        Arrays.sort(perCall);
        return samples % 2 == 1 ? perCall[samples / 2] : (perCall[samples / 2 - 1] + perCall[samples / 2]) / 2;
    }
}
