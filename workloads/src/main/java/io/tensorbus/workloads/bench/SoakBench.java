package io.tensorbus.workloads.bench;

import io.tensorbus.workloads.cli.Cli;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code soak} suite: long runs that check every result and watch memory, for what a benchmark of a few
 * seconds cannot show (a leak, a footprint that doubles over an hour, a heap cap that kills the job at
 * iteration 6,000). Two parts, each a job of its own ({@link SoakWorker}, one JVM per rank through the
 * launcher, so that {@code TENSORBUS_JVM_OPTS=-Xmx256m} caps every rank):
 * <ul>
 *   <li>{@code collectives}: {@code --world} ranks run {@code --iterations} all-reduces, broadcasts and
 *       all-gathers of mixed sizes up to {@code --max-bytes}, a fresh tensor each time as user code writes it,
 *       every element checked exactly;</li>
 *   <li>{@code rpc}: each worker makes {@code --rpc-calls} calls to the next one: numbers, tensor echoes up to
 *       64 KiB, and remote references created, fetched and deleted; every answer checked.</li>
 * </ul>
 * Every {@code --sample-every} iterations (or calls) rank 0 prints a {@code soak PART-sample} line: its resident
 * memory, heap and tensor memory (live and cached). At the end it prints {@code soak PART} with the count of
 * wrong results over all ranks and the largest resident-memory growth of any rank from the end of the warm-up
 * ({@code --warmup}, the first tenth by default) to the end: {@code growth_pct}, the highest resident memory of the
 * last tenth of the run over that of the tenth after the warm-up ({@code rss_warm_mib}, {@code rss_end_mib}).
 * With {@code --memory-scope true} each iteration (or call) runs in a {@code MemoryScope}: the difference shows
 * what waiting for the garbage collector to find dead tensors costs.
 */
public final class SoakBench {
    /** The parts, in the order they run. */
    static final List<String> PARTS = List.of("collectives", "rpc");

    /**
     * The suite's options.
     *
     * @param world ranks (and RPC workers), 2 to 8
     * @param iterations collectives per rank
     * @param rpcCalls calls each RPC worker makes
     * @param maxBytes the largest collective, in bytes
     * @param sampleEvery iterations (or calls) between two samples of memory
     * @param warmup iterations (or calls) before the resident memory that growth is measured from; -1 for a
     *        tenth of the run
     * @param parts the parts to run
     * @param memoryScope whether each iteration (or call) runs in a {@code MemoryScope}, which gives its tensors
     *        back when it ends rather than when the garbage collector finds them
     */
    public record Options(int world, int iterations, int rpcCalls, long maxBytes, int sampleEvery, int warmup,
                          List<String> parts, boolean memoryScope) {
        /** @throws IllegalArgumentException for values out of range or an unknown part */
        public Options {
            if (world < 2 || world > 8) {
                throw new IllegalArgumentException("--world must be from 2 to 8, got " + world);
            }
            if (iterations < 1 || rpcCalls < 1 || sampleEvery < 1) {
                throw new IllegalArgumentException("--iterations, --rpc-calls and --sample-every must be at least 1");
            }
            if (maxBytes < 4 || maxBytes > (256L << 20)) {
                throw new IllegalArgumentException("--max-bytes must be from 4 to 268435456, got " + maxBytes);
            }
            if (warmup < -1) {
                throw new IllegalArgumentException("--warmup must be 0 or more, got " + warmup);
            }
            parts = List.copyOf(parts);
            if (parts.isEmpty() || !PARTS.containsAll(parts)) {
                throw new IllegalArgumentException("--parts takes " + String.join(",", PARTS) + ", got " + parts);
            }
        }

        /** The soak: 3 ranks, 20,000 collectives up to 1 MiB, 300,000 calls per worker. */
        public static Options defaults() {
            return new Options(3, 20_000, 300_000, 1L << 20, 1000, -1, PARTS, false);
        }

        /** The iterations (or calls) before the baseline of growth, out of {@code total}. */
        int warmupOf(int total) {
            return warmup >= 0 ? Math.min(warmup, total) : total / 10;
        }

        /**
         * Parses the options of {@code tensorbus bench soak}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Suite(), args).options();
        }


        /** The arguments of one part's workers: these options with {@code --parts part}. */
        List<String> toArgs(String part) {
            List<String> args = new ArrayList<>(List.of("--world", Integer.toString(world), "--iterations",
                    Integer.toString(iterations), "--rpc-calls", Integer.toString(rpcCalls), "--max-bytes",
                    Long.toString(maxBytes), "--sample-every", Integer.toString(sampleEvery), "--parts", part,
                    "--memory-scope", Boolean.toString(memoryScope)));
            if (warmup >= 0) {
                args.addAll(List.of("--warmup", Integer.toString(warmup)));
            }
            return args;
        }
    }

    private final Options options;

    /** A run with {@code options}. */
    public SoakBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Runs each part as a job of its own; returns the first non-zero exit status, 1 when a part reported wrong
     * results, else 0.
     */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        List<Measurement> finals = new ArrayList<>();
        Consumer<Measurement> watch = m -> {
            if (PARTS.contains(m.name())) {
                finals.add(m);
            }
            sink.accept(m);
        };
        for (String part : options.parts()) {
            int status = MultiProcessBench.launch("soak", SoakWorker.class, options.world(), options.toArgs(part),
                    watch, err);
            if (status != 0) {
                return status;
            }
        }
        for (Measurement m : finals) {
            if (m.number("wrong") != 0) {
                err.println("tensorbus: soak " + m.name() + " had wrong results: " + m.line());
                return 1;
            }
        }
        return 0;
    }

    /** {@code tensorbus bench soak}: its options, and the run. */
    @Command(name = "soak", description = "long runs of collectives and RPC calls, every result checked and the"
            + " resident memory sampled")
    public static final class Suite extends BenchSuite {
        @Option(names = "--world", paramLabel = "N", description = "ranks, 2 to 8 (default: ${DEFAULT-VALUE})")
        int world = 3;
        @Option(names = "--iterations", paramLabel = "N",
                description = "collectives per rank (default: ${DEFAULT-VALUE})")
        int iterations = 20_000;
        @Option(names = "--rpc-calls", paramLabel = "N",
                description = "calls per RPC worker (default: ${DEFAULT-VALUE})")
        int rpcCalls = 300_000;
        @Option(names = "--max-bytes", paramLabel = "B",
                description = "the largest collective, 4 to 268435456 (default: ${DEFAULT-VALUE})")
        long maxBytes = 1L << 20;
        @Option(names = "--sample-every", paramLabel = "N",
                description = "iterations between two memory samples (default: ${DEFAULT-VALUE})")
        int sampleEvery = 1000;
        @Option(names = "--warmup", paramLabel = "N",
                description = "iterations before the memory growth is measured from (default: a tenth of the run)")
        Integer warmup;
        @Option(names = "--parts", paramLabel = "LIST", split = ",",
                description = "what to run: collectives, rpc or both (default: both)")
        List<String> parts = PARTS;
        @Option(names = "--memory-scope", paramLabel = "BOOL", arity = "1",
                description = "run each iteration in a MemoryScope: true or false (default: ${DEFAULT-VALUE})")
        boolean memoryScope;

        Options options() {
            int from = warmup == null ? -1 : Cli.range("--warmup", warmup, 0, Integer.MAX_VALUE);
            return new Options(world, iterations, rpcCalls, maxBytes, sampleEvery, from, parts, memoryScope);
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            SoakBench bench = new SoakBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
