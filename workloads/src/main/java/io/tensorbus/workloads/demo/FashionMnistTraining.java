package io.tensorbus.workloads.demo;

import io.tensorbus.data.DataLoader;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The local training demo: the PyTorch distributed tutorial's network trained on Fashion-MNIST with SGD
 * (lr 0.01, momentum 0.5, batch 128), as {@code tools/anchors/torch_fashion_mnist.py} does in PyTorch.
 * It reads the embedded subset by default (no download) or a directory with the full set, shows a progress
 * bar and the loss of each epoch, and ends with the test accuracy. The DDP workload
 * ({@code io.tensorbus.workloads.ddp}) trains the same network with the same settings on several processes.
 */
public final class FashionMnistTraining {
    /** The usage of {@code local-demo}'s options. */
    public static final String USAGE = "local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]";

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
     */
    public record Options(int epochs, Path dataDir, long seed, int batchSize, double lr, double momentum,
            int trainLimit) {
        /**
         * @throws IllegalArgumentException for epochs or batch size below 1, a negative rate or a negative limit
         */
        public Options {
            if (epochs < 1 || batchSize < 1 || !(lr >= 0) || !(momentum >= 0) || trainLimit < 0) {
                throw new IllegalArgumentException("need epochs >= 1, batch >= 1, lr >= 0, momentum >= 0 and a"
                        + " train limit >= 0 (0: all), got " + epochs + ", " + batchSize + ", " + lr + ", " + momentum
                        + ", " + trainLimit);
            }
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
         * @param usage the usage line quoted when an option is unknown
         * @throws IllegalArgumentException naming the option that is wrong and what it allows
         */
        public static Options parse(List<String> args, String usage) {
            Options d = defaults();
            int epochs = d.epochs();
            Path data = null;
            long seed = d.seed();
            int limit = 0;
            for (int i = 0; i < args.size(); i += 2) {
                String option = args.get(i);
                String value = value(args, i);
                switch (option) {
                    case "--epochs" -> epochs = (int) number(option, value, 1, Integer.MAX_VALUE);
                    case "--data" -> data = Path.of(value);
                    case "--seed" -> seed = number(option, value, Long.MIN_VALUE, Long.MAX_VALUE);
                    case "--limit" -> limit = (int) number(option, value, 0, Integer.MAX_VALUE);
                    default -> throw new IllegalArgumentException("unknown option " + option + "; usage: " + usage);
                }
            }
            return new Options(epochs, data, seed, d.batchSize(), d.lr(), d.momentum(), limit);
        }

        private static String value(List<String> args, int i) {
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(args.get(i) + " needs a value");
            }
            return args.get(i + 1);
        }

        private static long number(String option, String value, long min, long max) {
            long n;
            try {
                n = Long.parseLong(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " needs a whole number, got '" + value + "'");
            }
            if (n < min || n > max) {
                throw new IllegalArgumentException(option + " must be at least " + min + ", got " + n);
            }
            return n;
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
                + " test images, SGD lr %s momentum %s, batch %d%n", options.dataName(), trainSize(train),
                test.size(), options.lr(), options.momentum(), options.batchSize());
        MnistNet model = new MnistNet(new Generator(options.seed()));
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

    /** {@code local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]}. */
    public static void main(String[] args) throws IOException {
        new FashionMnistTraining(parse(args)).run(System.out);
    }

    static Options parse(String[] args) {
        return Options.parse(List.of(args), USAGE);
    }
}
