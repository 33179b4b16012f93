package io.tensorbus.workloads.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

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
    /** The usage of the suite's options. */
    public static final String USAGE = "soak [--world N] [--iterations N] [--rpc-calls N] [--max-bytes B]"
            + " [--sample-every N] [--warmup N] [--parts collectives,rpc] [--memory-scope true|false]";
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
         * Parses the options of {@link #USAGE}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            Options d = defaults();
            int world = d.world();
            int iterations = d.iterations();
            int rpcCalls = d.rpcCalls();
            long maxBytes = d.maxBytes();
            int sampleEvery = d.sampleEvery();
            int warmup = d.warmup();
            List<String> parts = d.parts();
            boolean memoryScope = d.memoryScope();
            for (Map.Entry<String, String> pair : MultiProcessBench.options(args).entrySet()) {
                String option = pair.getKey();
                String value = pair.getValue();
                switch (option) {
                    case "--world" -> world = (int) MultiProcessBench.number(option, value, 2, 8);
                    case "--iterations" -> iterations = (int) MultiProcessBench.number(option, value, 1, 1L << 30);
                    case "--rpc-calls" -> rpcCalls = (int) MultiProcessBench.number(option, value, 1, 1L << 30);
                    case "--max-bytes" -> maxBytes = MultiProcessBench.number(option, value, 4, 256L << 20);
                    case "--sample-every" -> sampleEvery = (int) MultiProcessBench.number(option, value, 1, 1L << 30);
                    case "--warmup" -> warmup = (int) MultiProcessBench.number(option, value, 0, 1L << 30);
                    case "--parts" -> parts = List.of(value.split(","));
                    case "--memory-scope" -> memoryScope = bool(option, value);
                    default -> throw new IllegalArgumentException("unknown option '" + option + "'; " + USAGE);
                }
            }
            return new Options(world, iterations, rpcCalls, maxBytes, sampleEvery, warmup, parts, memoryScope);
        }

        private static boolean bool(String option, String value) {
            return switch (value) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException(option + " takes true or false, got '" + value + "'");
            };
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
}
