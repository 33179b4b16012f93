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
 * The {@code rpc} suite, the measurement of {@code tools/anchors/torch_rpc.py} (TensorPipe): two
 * workers as separate JVMs ({@link RpcBenchWorker}, started through {@code tensorbus launch}); worker0 calls
 * worker1. Lines: {@code rpc sync rtt_us=T} (median of 500 {@code rpcSync} round trips of an add-one on a
 * number, run on the callee's pool as the anchor's), {@code rpc sync_on_event_loop rtt_us=T} (the same with the
 * function registered to run on the callee's event loop, which the anchor has no counterpart of),
 * {@code rpc async calls_per_s=C} (5000 {@code rpcAsync} calls in flight at once),
 * {@code rpc echo bytes=B rtt_us=T GBps=G} for float32 tensors of 4 KiB, 1 MiB and 16 MiB (median of 20 or
 * 5 echoes, {@code G = 2 B / T}) and {@code rpc remote per_s=R} (200 {@code remote} calls, then
 * {@code toHere} of each; the median of 9 rounds, after 10 untimed ones with the JIT warm-up).
 *
 * <p>Options: {@code --jit-warmup CALLS} (default {@value #DEFAULT_JIT_WARMUP} small calls and as many 4 KiB
 * tensor echoes before the first measurement, and 20 untimed echoes of each size besides the anchor's 3;
 * 0 measures a cold JVM with the anchor's 3) and {@code --max-bytes B} (skip larger echoes).
 */
public final class RpcBench {
    /** The anchor's echo sizes in bytes. */
    static final long[] SIZES = {4096, 1L << 20, 16L << 20};
    /** Small calls before the first measurement. */
    static final int DEFAULT_JIT_WARMUP = 2000;

    /**
     * The suite's options.
     *
     * @param jitWarmup calls before the first measurement
     * @param maxBytes the largest echo to measure
     */
    public record Options(int jitWarmup, long maxBytes) {
        /** @throws IllegalArgumentException for values out of range */
        public Options {
            if (jitWarmup < 0) {
                throw new IllegalArgumentException("--jit-warmup must be 0 or more, got " + jitWarmup);
            }
            if (maxBytes < 4) {
                throw new IllegalArgumentException("--max-bytes must be at least 4, got " + maxBytes);
            }
        }

        /** The anchor's run. */
        public static Options defaults() {
            return new Options(DEFAULT_JIT_WARMUP, Long.MAX_VALUE);
        }

        /**
         * Parses {@code --jit-warmup CALLS --max-bytes B}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Suite(), args).options();
        }

        /** The arguments that make {@link #parse} return these options (what the workers are given). */
        public List<String> toArgs() {
            return List.of("--jit-warmup", Integer.toString(jitWarmup), "--max-bytes", Long.toString(maxBytes));
        }
    }

    private final Options options;

    /** A run with {@code options}. */
    public RpcBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Runs the two workers; returns the launcher's exit status (0 when both succeeded). */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        return MultiProcessBench.launch("rpc", RpcBenchWorker.class, 2, options.toArgs(), sink, err);
    }

    /** {@code tensorbus bench rpc}: its options, and the run. */
    @Command(name = "rpc", description = "RPC round trips and tensor echoes of 4 KiB to 16 MiB between two"
            + " processes (the anchor torch_rpc.py)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--jit-warmup", paramLabel = "CALLS",
                description = "calls before the first measurement, 0 to 1000000 (default: ${DEFAULT-VALUE})")
        int jitWarmup = DEFAULT_JIT_WARMUP;
        @Option(names = "--max-bytes", paramLabel = "B", description = "the largest echo timed (default: all)")
        long maxBytes = Long.MAX_VALUE;

        Options options() {
            return new Options(Cli.range("--jit-warmup", jitWarmup, 0, 1_000_000), maxBytes);
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            RpcBench bench = new RpcBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
