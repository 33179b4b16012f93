package io.tensorbus.workloads.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The {@code p2p} suite, the measurement of {@code tools/anchors/torch_p2p.py} (gloo): a ping-pong of a
 * float32 tensor of 4 B, 4 KiB, 1 MiB and 64 MiB between two processes (separate JVMs started through
 * {@code tensorbus launch}, {@link P2pWorker}, one compute thread each): rank 0 sends and then receives, rank 1
 * receives and sends back. The median round trip of 200 (up to 4 KiB) or 10 round trips after 3 warm-ups is
 * reported as {@code p2p pingpong bytes=B rtt_us=T GBps=G}, with the anchor's one-way bandwidth
 * {@code G = 2 B / T}.
 *
 * <p>Options: {@code --max-bytes B} (skip larger sizes) and {@code --jit-warmup ROUNDS} (default
 * {@value #DEFAULT_JIT_WARMUP} small round trips before the first measurement; 0 measures a cold JVM).
 */
public final class P2pBench {
    /** The anchor's sizes in bytes. */
    static final long[] SIZES = {4, 4096, 1L << 20, 64L << 20};
    /** Round trips at 4 KiB before the first measurement. */
    static final int DEFAULT_JIT_WARMUP = 1000;
    /** The usage of the suite's options. */
    public static final String USAGE = "p2p [--max-bytes B] [--jit-warmup ROUNDS]";

    /**
     * The suite's options.
     *
     * @param maxBytes the largest size to measure
     * @param jitWarmup round trips before the first measurement
     */
    public record Options(long maxBytes, int jitWarmup) {
        /** @throws IllegalArgumentException for values out of range */
        public Options {
            if (maxBytes < SIZES[0]) {
                throw new IllegalArgumentException("--max-bytes must be at least " + SIZES[0] + ", got " + maxBytes);
            }
            if (jitWarmup < 0) {
                throw new IllegalArgumentException("--jit-warmup must be 0 or more, got " + jitWarmup);
            }
        }

        /** The anchor's run. */
        public static Options defaults() {
            return new Options(Long.MAX_VALUE, DEFAULT_JIT_WARMUP);
        }

        /**
         * Parses {@code --max-bytes B --jit-warmup ROUNDS}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            Options d = defaults();
            long maxBytes = d.maxBytes();
            int jitWarmup = d.jitWarmup();
            for (Map.Entry<String, String> pair : MultiProcessBench.options(args).entrySet()) {
                String option = pair.getKey();
                String value = pair.getValue();
                switch (option) {
                    case "--max-bytes" -> maxBytes = MultiProcessBench.number(option, value, SIZES[0], Long.MAX_VALUE);
                    case "--jit-warmup" -> jitWarmup = (int) MultiProcessBench.number(option, value, 0, 1_000_000);
                    default -> throw new IllegalArgumentException("unknown option '" + option + "'; " + USAGE);
                }
            }
            return new Options(maxBytes, jitWarmup);
        }

        /** The arguments that make {@link #parse} return these options (what the workers are given). */
        public List<String> toArgs() {
            return List.of("--max-bytes", Long.toString(maxBytes), "--jit-warmup", Integer.toString(jitWarmup));
        }
    }

    private final Options options;

    /** A run with {@code options}. */
    public P2pBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Starts the two ranks, hands each measurement to {@code sink} as rank 0 reports it, and returns 0, or the
     * exit status of the launch when a rank failed (its output and the launcher's messages go to {@code err}).
     */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        return MultiProcessBench.launch("p2p", P2pWorker.class, 2, options.toArgs(), sink, err);
    }

    /** The anchor's timed round trips: 200 up to 4 KiB, 10 above. */
    static int iterations(long nbytes) {
        return nbytes <= 4096 ? 200 : 10;
    }
}
