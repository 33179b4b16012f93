package io.tensorbus.workloads.demo;

import io.tensorbus.Device;
import io.tensorbus.data.DataLoader;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.workloads.cli.Cli;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.RunCommand;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * The local training demo: the PyTorch distributed tutorial's network trained on Fashion-MNIST with SGD
 * (lr 0.01, momentum 0.5, batch 128), as {@code tools/anchors/torch_fashion_mnist.py} does in PyTorch.
 * It reads the embedded subset by default (no download) or a directory with the full set, shows a progress
 * bar and the loss of each epoch, and ends with the test accuracy. The DDP workload
 * ({@code io.tensorbus.workloads.ddp}) trains the same network with the same settings on several processes.
 */
public final class FashionMnistTraining {
    /**
     * The run's settings.
     *
     * @param epochs passes over the training data, at least 1
     * @param dataDir a directory with the Fashion-MNIST files, or null for the embedded subset
     * @param seed of the initial weights, the dropout masks and the shuffling
     * @param batchSize images per optimizer step (for DDP: over all ranks together)
     * @param lr the SGD learning rate
     * @param momentum the SGD momentum
     * @param trainLimit images trained per epoch, 0 for all
     * @param device where the model trains: {@link Device#CPU}, or a device whose runtime is installed
     */
    public record Options(int epochs, Path dataDir, long seed, int batchSize, double lr, double momentum,
            int trainLimit, Device device) {
        /**
         * @throws IllegalArgumentException for epochs or batch size below 1, a negative rate or a negative limit
         */
        public Options {
            Objects.requireNonNull(device, "device");
            if (epochs < 1 || batchSize < 1 || !(lr >= 0) || !(momentum >= 0) || trainLimit < 0) {
                throw new IllegalArgumentException("need epochs >= 1, batch >= 1, lr >= 0, momentum >= 0 and a"
                        + " train limit >= 0 (0: all), got " + epochs + ", " + batchSize + ", " + lr + ", " + momentum
                        + ", " + trainLimit);
            }
        }

        /** Options that train on the host. */
        public Options(int epochs, Path dataDir, long seed, int batchSize, double lr, double momentum,
                int trainLimit) {
            this(epochs, dataDir, seed, batchSize, lr, momentum, trainLimit, Device.CPU);
        }

        /** These options training on {@code device}. */
        public Options onDevice(Device on) {
            return new Options(epochs, dataDir, seed, batchSize, lr, momentum, trainLimit, on);
        }

        /** The tutorial's settings on the embedded data. */
        public static Options defaults() {
            return new Options(5, null, 1234, 128, 0.01, 0.5, 0);
        }

        /** The training split, or the test split, of the data these options name. */
        public FashionMnist dataset(boolean train) throws IOException {
            return dataDir == null ? FashionMnist.embedded(train) : FashionMnist.load(dataDir, train);
        }

        /** Where the data comes from, for the first line of a run. */
        public String dataName() {
            return dataDir == null ? "embedded subset" : dataDir.toString();
        }

        /**
         * Parses {@code --epochs N --data DIR --seed S --limit N}, each optional, over {@link #defaults()}.
         *
         * @throws IllegalArgumentException naming the option that is wrong and what it allows
         */
        public static Options parse(List<String> args) {
            return Cli.parse(new Flags(), args).options();
        }
    }

    /** The options every Fashion-MNIST workload takes, with the same names: {@link Options}' command line. */
    public static class Flags {
        @Option(names = "--epochs", paramLabel = "N",
                description = "passes over the training data, at least 1 (default: ${DEFAULT-VALUE})")
        int epochs = Options.defaults().epochs();
        @Option(names = "--data", paramLabel = "DIR",
                description = "a directory with the Fashion-MNIST files (default: the embedded subset)")
        Path data;
        @Option(names = "--seed", paramLabel = "S",
                description = "of the weights, the dropout masks and the shuffling (default: ${DEFAULT-VALUE})")
        long seed = Options.defaults().seed();
        @Option(names = "--limit", paramLabel = "N",
                description = "images trained per epoch, 0 for all (default: ${DEFAULT-VALUE})")
        int limit;

        /**
         * The options given, over {@link Options#defaults()}.
         *
         * @throws IllegalArgumentException for a value out of range, naming the option
         */
        public Options options() {
            Options d = Options.defaults();
            return new Options(Cli.range("--epochs", epochs, 1, Integer.MAX_VALUE), data, seed, d.batchSize(), d.lr(),
                    d.momentum(), Cli.range("--limit", limit, 0, Integer.MAX_VALUE));
        }
    }

    /**
     * {@code --device DEV}: where a workload trains. A type without an index means the first device of that type,
     * which every rank on the node shares ({@code opencl}), or, for CUDA, the rank's own GPU ({@code cuda:LOCAL_RANK}),
     * as PyTorch's DDP examples place their ranks.
     */
    public static class DeviceFlag {
        @Option(names = "--device", paramLabel = "DEV",
                description = "where the model trains: cpu, opencl[:N] or cuda[:N] (default: ${DEFAULT-VALUE})")
        String device = "cpu";

        /**
         * The device given.
         *
         * @throws IllegalArgumentException for text that is not a device, naming the option
         */
        public Device device() {
            try {
                return Device.parse(device.trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--device " + device + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * {@code device} with an index: the given one, else {@code cuda:localRank} for CUDA and index 0 for other
     * types.
     */
    public static Device placed(Device device, int localRank) {
        if (device.isCpu() || device.index() >= 0) {
            return device;
        }
        return new Device(device.type(), device.type().equals("cuda") ? localRank : 0);
    }

    /** {@code tensorbus run local-demo}: the training options, and the run. */
    @Command(name = "local-demo", description = "one process, no communication: the model and the data alone")
    public static final class LocalDemo extends Flags implements Callable<Integer> {
        @ParentCommand
        private RunCommand run;
        @Mixin
        private HelpOption help;
        @Mixin
        private DeviceFlag device = new DeviceFlag();

        @Override
        public Integer call() throws IOException {
            new FashionMnistTraining(options().onDevice(placed(device.device(), 0))).run(run.console().out());
            return 0;
        }
    }

    private final Options options;

    /** A run with the given settings. */
    public FashionMnistTraining(Options options) {
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Trains and returns the test accuracy in [0, 1], printing progress and results to {@code out}.
     *
     * @throws IOException when the data directory cannot be read
     */
    public double run(PrintStream out) throws IOException {
        FashionMnist train = options.dataset(true);
        FashionMnist test = options.dataset(false);
        out.printf(Locale.ROOT, "tensorbus local demo: tutorial network on Fashion-MNIST (%s), %d training and %d"
                + " test images, SGD lr %s momentum %s, batch %d, on %s%n", options.dataName(), trainSize(train),
                test.size(), options.lr(), options.momentum(), options.batchSize(), options.device());
        MnistNet model = new MnistNet(new Generator(options.seed()));
        model.to(options.device());
        SGD sgd = SGD.builder().lr(options.lr()).momentum(options.momentum()).build(model.parameters());
        DataLoader<?> loader = DataLoader.builder(train).batchSize(options.batchSize()).shuffle(true)
                .seed(options.seed()).build();
        int batches = TrainingLoop.batchesPerEpoch(loader.size(), options.trainLimit(), options.batchSize());
        for (int epoch = 1; epoch <= options.epochs(); epoch++) {
            TrainingLoop.EpochStats s = TrainingLoop.epoch(model, sgd, loader, batches, epoch, options.epochs(), out);
            out.println(TrainingLoop.epochLine(epoch, options.epochs(), s.meanLoss(), s.seconds(),
                    s.samplesPerSecond()));
        }
        double accuracy = TrainingLoop.correct(model, test.images(), test.labels()) / (double) test.size();
        out.println(TrainingLoop.accuracyLine(accuracy));
        return accuracy;
    }

    private int trainSize(FashionMnist train) {
        return options.trainLimit() == 0 ? train.size() : Math.min(options.trainLimit(), train.size());
    }

    /** {@code local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]}, as a main class. */
    public static void main(String[] args) throws IOException {
        new FashionMnistTraining(parse(args)).run(System.out);
    }

    static Options parse(String[] args) {
        return Options.parse(List.of(args));
    }
}
