package io.tensorbus.workloads.bench;

import io.tensorbus.workloads.cli.Cli;
import java.io.PrintStream;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

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
    /**
     * Round trips at 4 KiB before the first measurement: the 4-byte round trip reaches its steady time only after
     * some 100,000 of them (13 us after 1,000, 8 after 20,000, 4-5 after 100,000 on a 2-core EPYC), as the
     * optimizing compiler recompiles the path with each profile it gathers; about a second.
     */
    static final int DEFAULT_JIT_WARMUP = 100_000;

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
            return Cli.parse(new Suite(), args).options();
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

    /** {@code tensorbus bench p2p}: its options, and the run. */
    @Command(name = "p2p", description = "round trips of 4 B to 64 MiB between two processes (the anchor"
            + " torch_p2p.py)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--max-bytes", paramLabel = "B", description = "the largest message timed (default: all)")
        long maxBytes = Long.MAX_VALUE;
        @Option(names = "--jit-warmup", paramLabel = "ROUNDS",
                description = "round trips before the first measurement, 0 to 1000000 (default: ${DEFAULT-VALUE})")
        int jitWarmup = DEFAULT_JIT_WARMUP;

        Options options() {
            return new Options(maxBytes, Cli.range("--jit-warmup", jitWarmup, 0, 1_000_000));
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            P2pBench bench = new P2pBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
