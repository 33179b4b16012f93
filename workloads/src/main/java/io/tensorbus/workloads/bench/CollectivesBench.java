package io.tensorbus.workloads.bench;

import io.tensorbus.Device;
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
 * The {@code collectives} suite, the measurements of {@code tools/anchors/torch_collectives.py} (gloo):
 * all-reduce (SUM), broadcast (from rank 0) and all-gather of float32 tensors of 4 B, 4 KiB, 256 KiB, 4 MiB
 * and 64 MiB across {@code --world} processes, each a separate JVM started through {@code tensorbus launch}
 * ({@link CollectivesWorker}) with one compute thread. Each measurement is the median of 50, 10 or 4 calls
 * (by size) after 3 warm-up calls and, unless {@code --jit-warmup 0}, a wait until the JIT compilers are idle, each
 * timed call preceded by a barrier; rank 0 reports
 * {@code collectives OP bytes=B world=N latency_us=T busbw_GBps=BW}.
 *
 * <p>Options: {@code --world N} (default 2), {@code --ops allreduce,broadcast,allgather} (the default, all
 * three), {@code --max-bytes B} (skip larger sizes; default all) and {@code --jit-warmup ROUNDS} (default
 * {@value #DEFAULT_JIT_WARMUP}; 0 measures a cold JVM), {@code --backend NAME} (default {@code tcp}) and
 * {@code --device DEV} (where the tensors live, default {@code cpu}; {@code opencl:0} with {@code --backend
 * opencl}; {@code cuda} with {@code --backend nccl}, each rank on its own device, {@code cuda:LOCAL_RANK}) and
 * {@code --ranks-as-threads} (the ranks as threads of one JVM). Lines of a run with another backend or device name
 * them: {@code backend=opencl device=opencl:0}; those of a run with the ranks as threads say {@code ranks=threads}.
 */
public final class CollectivesBench {
    /** The anchor's sizes in bytes. */
    static final long[] SIZES = {4, 4096, 262144, 4L << 20, 64L << 20};
    /** The operations, in the anchor's order. */
    static final List<String> OPS = List.of("allreduce", "broadcast", "allgather");
    /**
     * Rounds of each operation every rank runs before the first measurement (fewer above
     * {@link CollectivesWorker#FULL_WARMUP_BYTES}): after 300 a 4-byte all-reduce still ran partly in profiling code
     * (31 us, against 13 after 5,000, on a 2-core EPYC).
     */
    static final int DEFAULT_JIT_WARMUP = 5000;

    /**
     * The suite's options.
     *
     * @param world the number of processes, 2 to 64
     * @param ops the operations to measure, in the order given
     * @param maxBytes the largest size to measure
     * @param jitWarmup rounds of each operation before the first measurement
     * @param backend the process group's backend
     * @param device where the tensors live
     * @param ranksAsThreads true to run the ranks as threads of one JVM ({@code tensorbus launch --ranks-as-threads})
     *     instead of one process each
     */
    public record Options(int world, List<String> ops, long maxBytes, int jitWarmup, String backend, Device device,
                          boolean ranksAsThreads) {
        /** @throws IllegalArgumentException for values out of range or an unknown operation */
        public Options {
            if (backend == null || !backend.matches("[a-z0-9_-]+")) {
                throw new IllegalArgumentException("--backend must be a backend's name such as tcp or opencl, got '"
                        + backend + "'");
            }
            Objects.requireNonNull(device, "device");
            if (world < 2 || world > 64) {
                throw new IllegalArgumentException("--world must be from 2 to 64, got " + world);
            }
            ops = List.copyOf(ops);
            if (ops.isEmpty()) {
                throw new IllegalArgumentException("--ops needs at least one of " + String.join(", ", OPS));
            }
            for (String op : ops) {
                if (!OPS.contains(op)) {
                    throw new IllegalArgumentException("unknown operation '" + op + "' in --ops; known: "
                            + String.join(", ", OPS));
                }
            }
            if (maxBytes < SIZES[0]) {
                throw new IllegalArgumentException("--max-bytes must be at least " + SIZES[0] + ", got " + maxBytes);
            }
            if (jitWarmup < 0) {
                throw new IllegalArgumentException("--jit-warmup must be 0 or more, got " + jitWarmup);
            }
        }

        /** Options with one process per rank. */
        public Options(int world, List<String> ops, long maxBytes, int jitWarmup, String backend, Device device) {
            this(world, ops, maxBytes, jitWarmup, backend, device, false);
        }

        /** Options on the tcp backend with host tensors, one process per rank. */
        public Options(int world, List<String> ops, long maxBytes, int jitWarmup) {
            this(world, ops, maxBytes, jitWarmup, "tcp", Device.CPU);
        }

        /** The anchor's run on 2 processes. */
        public static Options defaults() {
            return new Options(2, OPS, Long.MAX_VALUE, DEFAULT_JIT_WARMUP);
        }

        /** True unless the run is the anchor's setting (tcp, host tensors), whose lines name neither. */
        boolean namesPlacement() {
            return !backend.equals("tcp") || !device.isCpu();
        }

        /**
         * Parses {@code --world N --ops LIST --max-bytes B --jit-warmup ROUNDS}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Suite(), args).options();
        }

        /**
         * Where a backend's tensors live when {@code --device} is not given: each rank's own device of the type
         * the backend reduces on (opencl: OpenCL, nccl: CUDA), the host otherwise.
         */
        static Device deviceOf(String backend) {
            return switch (backend) {
                case "opencl" -> Device.parse("opencl");
                case "nccl" -> Device.parse("cuda");
                default -> Device.CPU;
            };
        }

        /** The arguments that make {@link #parse} return these options (what the workers are given). */
        public List<String> toArgs() {
            List<String> args = new ArrayList<>(List.of("--world", Integer.toString(world), "--ops",
                    String.join(",", ops), "--max-bytes", Long.toString(maxBytes), "--jit-warmup",
                    Integer.toString(jitWarmup), "--backend", backend, "--device", device.toString()));
            if (ranksAsThreads) {
                args.add("--ranks-as-threads");
            }
            return List.copyOf(args);
        }

    }

    private final Options options;

    /** A run with {@code options}. */
    public CollectivesBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Starts the ranks, hands each measurement to {@code sink} as rank 0 reports it, and returns 0, or the
     * exit status of the launch when a rank failed (its output and the launcher's messages go to {@code err}).
     */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        return MultiProcessBench.launch("collectives", CollectivesWorker.class, options.world(),
                options.ranksAsThreads(), options.toArgs(), sink, err);
    }

    /** The anchor's timed iterations: 50 up to 256 KiB, 10 up to 4 MiB, 4 above. */
    static int iterations(long nbytes) {
        return nbytes <= 262144 ? 50 : nbytes <= (4L << 20) ? 10 : 4;
    }

    /**
     * nccl-tests' bus bandwidth factor, what the anchor multiplies the algorithm bandwidth by: all-reduce
     * {@code 2 (n - 1) / n}, all-gather {@code (n - 1) / n}, broadcast 1.
     */
    static double busBandwidthFactor(String op, int world) {
        return switch (op) {
            case "allreduce" -> 2.0 * (world - 1) / world;
            case "allgather" -> (world - 1) / (double) world;
            case "broadcast" -> 1.0;
            default -> throw new IllegalArgumentException("unknown operation '" + op + "'");
        };
    }

    /** {@code tensorbus bench collectives}: its options, and the run. */
    @Command(name = "collectives", description = "all-reduce, broadcast and all-gather of 4 B to 64 MiB, one process"
            + " per rank (the anchor torch_collectives.py)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--world", paramLabel = "N", description = "processes, 2 to 64 (default: ${DEFAULT-VALUE})")
        int world = 2;
        @Option(names = "--ops", paramLabel = "LIST", split = ",",
                description = "operations to time, of allreduce, broadcast, allgather (default: all)")
        List<String> ops = OPS;
        @Option(names = "--max-bytes", paramLabel = "B", description = "the largest size timed (default: all)")
        long maxBytes = Long.MAX_VALUE;
        @Option(names = "--jit-warmup", paramLabel = "ROUNDS",
                description = "rounds of each operation first, 0 to 1000000 (default: ${DEFAULT-VALUE})")
        int jitWarmup = DEFAULT_JIT_WARMUP;
        @Option(names = "--backend", paramLabel = "NAME",
                description = "tcp, opencl or nccl (default: ${DEFAULT-VALUE})")
        String backend = "tcp";
        @Option(names = "--device", paramLabel = "DEV", description = "cpu, opencl[:N] or cuda[:N]; ranks share a"
                + " device when there are fewer (default: the backend's)")
        String device;
        @Option(names = "--ranks-as-threads", description = "run the ranks as threads of one JVM, not one process each")
        boolean ranksAsThreads;

        Options options() {
            List<String> named = ops.stream().map(String::trim).filter(op -> !op.isEmpty()).toList();
            Device where = device != null ? Device.parse(device) : Options.deviceOf(backend);
            return new Options(world, named, maxBytes,
                    Cli.range("--jit-warmup", jitWarmup, 0, 1_000_000), backend, where, ranksAsThreads);
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            CollectivesBench bench = new CollectivesBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
