package io.tensorbus.workloads.demo;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.data.Batch;
import io.tensorbus.data.BatchIterator;
import io.tensorbus.data.DataLoader;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.spi.DType;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The local training demo: the PyTorch distributed tutorial's network trained on Fashion-MNIST with SGD
 * (lr 0.01, momentum 0.5, batch 128), as {@code ../shared/anchors/torch_fashion_mnist.py} does in PyTorch.
 * It reads the embedded subset by default (no download) or a directory with the full set, shows a progress
 * bar and the loss of each epoch, and ends with the test accuracy. DDP training replaces it as the main job.
 */
public final class FashionMnistTraining {
    /** The run's settings. */
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
    }

    private final Options options;

    /** A run with the given settings. */
    public FashionMnistTraining(Options options) {
        this.options = java.util.Objects.requireNonNull(options, "options");
    }

    /**
     * Trains and returns the test accuracy in [0, 1], printing progress and results to {@code out}.
     *
     * @throws IOException when the data directory cannot be read
     */
    public double run(PrintStream out) throws IOException {
        FashionMnist train = dataset(true);
        FashionMnist test = dataset(false);
        out.printf(Locale.ROOT, "tensorbus local demo: tutorial network on Fashion-MNIST (%s), %d training and %d"
                + " test images, SGD lr %s momentum %s, batch %d%n", options.dataDir() == null ? "embedded subset"
                : options.dataDir(), trainSize(train), test.size(), options.lr(), options.momentum(),
                options.batchSize());
        Generator gen = new Generator(options.seed());
        MnistNet model = new MnistNet(gen);
        SGD sgd = SGD.builder().lr(options.lr()).momentum(options.momentum()).build(model.parameters());
        DataLoader<?> loader = DataLoader.builder(train).batchSize(options.batchSize()).shuffle(true)
                .seed(options.seed()).build();
        for (int epoch = 1; epoch <= options.epochs(); epoch++) {
            trainEpoch(model, sgd, loader, epoch, out);
        }
        double accuracy = accuracy(model, test);
        out.printf(Locale.ROOT, "test accuracy %.2f%%%n", accuracy * 100);
        return accuracy;
    }

    private FashionMnist dataset(boolean train) throws IOException {
        return options.dataDir() == null ? FashionMnist.embedded(train) : FashionMnist.load(options.dataDir(), train);
    }

    private int trainSize(FashionMnist train) {
        return options.trainLimit() == 0 ? train.size() : Math.min(options.trainLimit(), train.size());
    }

    private void trainEpoch(MnistNet model, SGD sgd, DataLoader<?> loader, int epoch, PrintStream out) {
        model.train();
        int batches = batchesPerEpoch(loader);
        double total = 0;
        int seen = 0;
        long start = System.nanoTime();
        try (BatchIterator it = loader.iterator()) {
            for (int b = 0; b < batches && it.hasNext(); b++) {
                Batch batch = it.next();
                sgd.zeroGrad(true);
                Tensor loss = Functional.nllLoss(model.forward(batch.inputs()), batch.targets());
                loss.backward();
                sgd.step();
                total += loss.item();
                seen += batch.inputs().size(0);
                ProgressBar.show(out, epoch, options.epochs(), b + 1, batches, total / (b + 1));
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        ProgressBar.finish(out);
        out.printf(Locale.ROOT, "epoch %d/%d  loss %.4f  %.1f s  %.0f samples/s%n", epoch, options.epochs(),
                total / Math.max(1, batches), seconds, seen / seconds);
    }

    private int batchesPerEpoch(DataLoader<?> loader) {
        int limit = options.trainLimit() == 0 ? Integer.MAX_VALUE
                : (options.trainLimit() + options.batchSize() - 1) / options.batchSize();
        return Math.min(loader.size(), limit);
    }

    private static double accuracy(MnistNet model, FashionMnist test) {
        model.eval();
        try (var ignored = Autograd.noGrad()) {
            Tensor predicted = model.forward(test.images()).argmax(1, false);
            return predicted.eq(test.labels()).to(DType.FLOAT32).mean().item();
        }
    }

    /** {@code local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]}. */
    public static void main(String[] args) throws IOException {
        new FashionMnistTraining(parse(args)).run(System.out);
    }

    static Options parse(String[] args) {
        Options d = Options.defaults();
        int epochs = d.epochs();
        Path data = null;
        long seed = d.seed();
        int limit = 0;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--epochs" -> epochs = Integer.parseInt(require(value, "--epochs"));
                case "--data" -> data = Path.of(require(value, "--data"));
                case "--seed" -> seed = Long.parseLong(require(value, "--seed"));
                case "--limit" -> limit = Integer.parseInt(require(value, "--limit"));
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; usage: local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]");
            }
            i++;
        }
        return new Options(epochs, data, seed, d.batchSize(), d.lr(), d.momentum(), limit);
    }

    private static String require(String value, String option) {
        if (value == null) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return value;
    }
}
