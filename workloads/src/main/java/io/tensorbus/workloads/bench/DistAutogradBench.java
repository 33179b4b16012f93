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
 * The {@code dist-autograd} suite, the measurement of {@code tools/anchors/torch_dist_autograd.py}: two
 * workers as separate JVMs ({@link DistAutogradBenchWorker}, started through {@code tensorbus launch}). One step
 * is the seed's forward ({@code t3 = rpcSync(worker1, my_add, t1, t2)}, {@code loss = (t3 * t4).sum()}) in a
 * distributed autograd context, the distributed backward, {@code getGradients} and a
 * {@code DistributedOptimizer} SGD step over RRefs of {@code t1, t2, t4}, for n x n float32 tensors:
 * {@code dist-autograd step n=N step_us=T} (median of 300 steps for n=3, 20 for n=1024). Then the two-stage
 * model-parallel MLP (Linear(784, 1024) and ReLU on worker0, Linear(1024, 1024), ReLU, Linear(1024, 10) on
 * worker1 fetching its input through an RRef): {@code dist-autograd mlp batch=64 step_ms=T} (median of 30 steps
 * after 10). Each line in FAST mode (PyTorch's), then as {@code step-smart} and {@code mlp-smart} in SMART mode.
 *
 * <p>Options: {@code --jit-warmup STEPS} (default {@value #DEFAULT_JIT_WARMUP} untimed n=3 steps before the
 * first measurement besides the anchor's 10, and a tenth as many untimed n=1024 steps, whose vector loops a
 * 3x3 step never runs, so they are compiled before they are timed; 0 measures a cold JVM).
 */
public final class DistAutogradBench {
    /** Small untimed steps before the first measurement. */
    static final int DEFAULT_JIT_WARMUP = 500;

    /**
     * The suite's options.
     *
     * @param jitWarmup untimed small steps before the first measurement
     */
    public record Options(int jitWarmup) {
        /** @throws IllegalArgumentException for a negative warm-up */
        public Options {
            if (jitWarmup < 0) {
                throw new IllegalArgumentException("--jit-warmup must be 0 or more, got " + jitWarmup);
            }
        }

        /**
         * Parses {@code --jit-warmup STEPS}, optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Suite(), args).options();
        }

        /** The arguments that make {@link #parse} return these options (what the workers are given). */
        public List<String> toArgs() {
            return List.of("--jit-warmup", Integer.toString(jitWarmup));
        }
    }

    private final Options options;

    /** A run with {@code options}. */
    public DistAutogradBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /** Runs the two workers; returns the launcher's exit status (0 when both succeeded). */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        return MultiProcessBench.launch("dist-autograd", DistAutogradBenchWorker.class, 2, options.toArgs(), sink, err);
    }

    /** {@code tensorbus bench dist-autograd}: its options, and the run. */
    @Command(name = "dist-autograd", description = "distributed autograd steps over RPC between two processes (the"
            + " anchor torch_dist_autograd.py)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--jit-warmup", paramLabel = "STEPS",
                description = "untimed small steps first, 0 to 1000000 (default: ${DEFAULT-VALUE})")
        int jitWarmup = DEFAULT_JIT_WARMUP;

        Options options() {
            return new Options(Cli.range("--jit-warmup", jitWarmup, 0, 1_000_000));
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            DistAutogradBench bench = new DistAutogradBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
