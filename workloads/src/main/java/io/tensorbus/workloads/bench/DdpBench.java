package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.cli.Cli;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The {@code ddp} suite, the measurement of {@code tools/anchors/torch_ddp.py}: training steps (zero grad,
 * forward, NLL loss, backward, SGD lr 0.01 momentum 0.5) of the tutorial network at global batch 128 on
 * synthetic 28x28 data, each step in a {@link MemoryScope} as the README's training loop runs it (its tensors go
 * back as it ends, where PyTorch frees them as their last reference dies), each of {@code --world} processes
 * taking {@code 128 / world} images, with one compute
 * thread per process. The JVM compiles the kernels while it runs, and on a machine with one core per rank
 * its compilers compete with the ranks, so the timed {@code --steps} (60) follow {@code --warmup} (1000)
 * untimed steps, as JMH warms up; {@code cold_step_ms} is the anchor's own protocol on a fresh JVM (median of
 * steps 10 to 60 from the start). With {@code --world 1} it
 * trains locally without DDP in this JVM, as the anchor does; with more, each rank is a JVM started through
 * {@code tensorbus launch} ({@link DdpBenchWorker}) and wraps the network in {@link DistributedDataParallel}.
 * Rank 0 reports {@code ddp step world=N batch=128 step_ms=T samples_per_s=S cold_step_ms=F exposed_comm_ms=C},
 * where the
 * last is the median time a backward pass waited for gradient communication after its compute had ended
 * ({@link DistributedDataParallel#lastExposedCommunication()}; absent for world 1, which has none).
 */
public final class DdpBench {
    /** The anchor's global batch. */
    static final int GLOBAL_BATCH = 128;
    /** The anchor's steps left out of the median (warm-up). */
    static final int SKIPPED_STEPS = 10;
    /** The anchor's last step of its median, for {@code cold_step_ms}. */
    static final int ANCHOR_STEPS = 60;

    /**
     * The suite's options.
     *
     * @param world the number of processes, 1 to 64 (1: local training without DDP)
     * @param warmup untimed steps before the timed ones, 0 to 1,000,000 (with 0 the first
     *     {@link #SKIPPED_STEPS} timed steps are left out instead)
     * @param steps the timed training steps, more than {@link #SKIPPED_STEPS}
     * @param device where the ranks train: the host, or a device they share (opencl) or each take (cuda)
     * @param ranksAsThreads true to run the ranks as threads of one JVM ({@code tensorbus launch --ranks-as-threads})
     *     instead of one process each
     */
    public record Options(int world, int warmup, int steps, Device device, boolean ranksAsThreads) {
        /**
         * Checks the ranges.
         *
         * @throws IllegalArgumentException for values out of range
         */
        public Options {
            if (world < 1 || world > 64) {
                throw new IllegalArgumentException("--world must be from 1 to 64, got " + world);
            }
            if (world > GLOBAL_BATCH) {
                throw new IllegalArgumentException("--world " + world + " leaves no image per rank of batch "
                        + GLOBAL_BATCH);
            }
            if (warmup < 0 || warmup > 1_000_000) {
                throw new IllegalArgumentException("--warmup must be from 0 to 1000000, got " + warmup);
            }
            Objects.requireNonNull(device, "device");
            if (steps <= SKIPPED_STEPS) {
                throw new IllegalArgumentException("--steps must be more than the " + SKIPPED_STEPS
                        + " warm-up steps, got " + steps);
            }
        }

        /** Options on the host, one process per rank. */
        public Options(int world, int warmup, int steps) {
            this(world, warmup, steps, Device.CPU, false);
        }

        /** The anchor's run, 2 processes and 60 steps, after 1000 warm-up steps. */
        public static Options defaults() {
            return new Options(2, 1000, 60);
        }

        /**
         * Parses {@code --world N --warmup W --steps S}, each optional.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Suite(), args).options();
        }

        /** The arguments that give the workers these options (how the ranks run is the launcher's). */
        public List<String> toArgs() {
            return List.of("--world", Integer.toString(world), "--warmup", Integer.toString(warmup), "--steps",
                    Integer.toString(steps), "--device", device.toString());
        }
    }

    private final Options options;

    /** A run with {@code options}. */
    public DdpBench(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Runs the measurement and hands it to {@code sink}; returns 0, or the exit status of the launch when a rank
     * failed (its output and the launcher's messages go to {@code err}).
     */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        if (options.world() > 1) {
            return MultiProcessBench.launch("ddp", DdpBenchWorker.class, options.world(), options.ranksAsThreads(),
                    options.toArgs(), sink, err);
        }
        int before = Threads.get();
        try {
            // One thread, as the anchor's torch.set_num_threads(1).
            Threads.set(1);
            MnistNet net = new MnistNet(new Generator(1234));
            net.to(FashionMnistTraining.placed(options.device(), 0));
            sink.accept(measure(net, 1, options));
            return 0;
        } finally {
            Threads.set(before);
        }
    }

    /**
     * The anchor's loop on this process: {@code warmup + steps} training steps of {@code model} (the network,
     * or its {@link DistributedDataParallel} wrapper, whose exposed communication is then reported too) on
     * {@code 128 / world} random images; the median of the timed ones.
     */
    static Measurement measure(Module model, int world, Options options) {
        DistributedDataParallel ddp = model instanceof DistributedDataParallel d ? d : null;
        SGD sgd = SGD.builder().lr(0.01).momentum(0.5).build(model.parameters());
        int batch = GLOBAL_BATCH / world;
        Device device = model.device();
        Tensor x = Tensor.randn(new Generator(2), DType.FLOAT32, batch, 1, 28, 28).to(device);
        Tensor y = Tensor.randint(new Generator(3), 0, 10, batch).to(device);
        int total = options.warmup() + options.steps();
        double[] seconds = new double[total];
        double[] exposed = new double[total];
        for (int i = 0; i < total; i++) {
            long t0 = System.nanoTime();
            try (MemoryScope scope = MemoryScope.open()) {
                sgd.zeroGrad(true);
                Functional.nllLoss(model.forward(x), y).backward();
                sgd.step();
            }
            seconds[i] = (System.nanoTime() - t0) / 1e9;
            exposed[i] = ddp == null ? 0 : ddp.lastExposedCommunication().toNanos() / 1e9;
        }
        int from = options.warmup() > 0 ? options.warmup() : SKIPPED_STEPS;
        double step = MultiProcessBench.median(Arrays.copyOfRange(seconds, from, total));
        Measurement m = new Measurement("ddp", "step").with("world", world).with("batch", batch * world);
        if (!device.isCpu()) {
            m.with("device", device.toString());
        }
        m.with("step_ms", step * 1000, 2).with("samples_per_s", batch * world / step, 0);
        if (total >= ANCHOR_STEPS) {
            double cold = MultiProcessBench.median(Arrays.copyOfRange(seconds, SKIPPED_STEPS, ANCHOR_STEPS));
            m.with("cold_step_ms", cold * 1000, 2);
        }
        if (ddp != null) {
            double comm = MultiProcessBench.median(Arrays.copyOfRange(exposed, from, total));
            m.with("exposed_comm_ms", comm * 1000, 3);
        }
        return m;
    }

    /** {@code tensorbus bench ddp}: its options, and the run. */
    @Command(name = "ddp", description = "DDP training steps of the tutorial network at global batch 128, one"
            + " process per rank (the anchor torch_ddp.py)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--world", paramLabel = "N",
                description = "processes, 1 to 64; 1 trains locally without DDP (default: ${DEFAULT-VALUE})")
        int world = 2;
        @Option(names = "--warmup", paramLabel = "W",
                description = "untimed steps before the timed ones, 0 to 1000000 (default: ${DEFAULT-VALUE})")
        int warmup = 1000;
        @Option(names = "--steps", paramLabel = "S",
                description = "timed steps, more than 10 (default: ${DEFAULT-VALUE})")
        int steps = 60;
        @Mixin
        FashionMnistTraining.DeviceFlag device = new FashionMnistTraining.DeviceFlag();
        @Option(names = "--ranks-as-threads", description = "run the ranks as threads of one JVM, not one process each")
        boolean ranksAsThreads;

        Options options() {
            return new Options(world, warmup, Cli.range("--steps", steps, SKIPPED_STEPS + 1, 1_000_000),
                    device.device(), ranksAsThreads);
        }

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            DdpBench bench = new DdpBench(options());
            return () -> bench.run(sink, err);
        }
    }
}
