package io.tensorbus.workloads.examples;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.data.Batch;
import io.tensorbus.data.BatchIterator;
import io.tensorbus.data.DataLoader;
import io.tensorbus.data.Dataset;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The tutorial's distributed synchronous SGD: every rank trains the tutorial's network ({@link MnistNet}) on
 * its own partition of the data ({@link DataPartitioner}, one equal part per rank, the same seeded shuffle
 * everywhere), with batches of {@code 128 / world} so that a step sees 128 samples in all, and before each
 * optimizer step averages the gradients over the ranks ({@link #averageGradients}: an all-reduce SUM of each
 * parameter's gradient, divided by the world size). All ranks start from the same weights (seed 1234) and
 * apply the same averaged gradients, so their models stay identical. The data is the Fashion-MNIST subset
 * embedded in the api jar (the tutorial uses MNIST; the network is the same); SGD with lr 0.01 and momentum
 * 0.5, as the tutorial. Prints {@code Rank R, epoch E: loss L} after each epoch, L being the mean loss of the
 * rank's batches.
 *
 * <pre>tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.SynchronousSgd --epochs 2</pre>
 */
public final class SynchronousSgd {
    /** The batch size summed over the ranks, the tutorial's 128. */
    public static final int GLOBAL_BATCH = 128;
    /** The tutorial's seed ({@code torch.manual_seed(1234)}), also the partitioner's. */
    public static final long SEED = 1234;

    /**
     * The run's settings.
     *
     * @param epochs passes over each rank's partition, at least 1
     * @param limit how many samples of the dataset to partition (its first ones), or 0 for all of it
     */
    public record Options(int epochs, int limit) {
        /** @throws IllegalArgumentException for epochs below 1 or a negative limit */
        public Options {
            if (epochs < 1) {
                throw new IllegalArgumentException("--epochs must be at least 1, got " + epochs);
            }
            if (limit < 0) {
                throw new IllegalArgumentException("--limit must be 0 (all samples) or more, got " + limit);
            }
        }

        /** One epoch over all of the embedded training subset. */
        public static Options defaults() {
            return new Options(1, 0);
        }
    }

    /**
     * What one rank ended with.
     *
     * @param model the trained model
     * @param epochLosses the mean loss of each epoch's batches
     * @param steps the optimizer steps taken
     */
    public record Result(MnistNet model, double[] epochLosses, int steps) {
    }

    private SynchronousSgd() {
    }

    /** {@code [--epochs N] [--limit SAMPLES]}: joins the job through {@code env://} and trains. */
    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("SynchronousSgd: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (options == null) {
            new CommandLine(new Flags()).usage(System.out);
            return;
        }
        ExampleMain.run(pg -> run(pg, options, System.out));
    }

    /** Trains with {@link Options#defaults()}, printing to {@code System.out}. */
    public static Result run(ProcessGroup pg) {
        return run(pg, Options.defaults(), System.out);
    }

    /**
     * The tutorial's {@code run(rank, size)}: partitions the data, trains, prints each epoch's loss.
     *
     * @throws IllegalArgumentException when the (limited) dataset has fewer samples than ranks
     */
    public static Result run(ProcessGroup pg, Options options, PrintStream out) {
        Generator generator = new Generator(SEED);
        DataLoader<List<Tensor>> trainSet = partitionDataset(pg, options.limit());
        MnistNet model = new MnistNet(generator);
        SGD optimizer = SGD.builder().lr(0.01).momentum(0.5).build(model.parameters());
        model.train();

        int numBatches = trainSet.size();
        double[] losses = new double[options.epochs()];
        int steps = 0;
        for (int epoch = 0; epoch < options.epochs(); epoch++) {
            double epochLoss = 0;
            try (BatchIterator it = trainSet.iterator()) {
                while (it.hasNext()) {
                    Batch batch = it.next();
                    optimizer.zeroGrad(true);
                    Tensor output = model.forward(batch.inputs());
                    Tensor loss = Functional.nllLoss(output, batch.targets());
                    epochLoss += loss.item();
                    loss.backward();
                    averageGradients(model, pg);
                    optimizer.step();
                    steps++;
                }
            }
            losses[epoch] = epochLoss / numBatches;
            out.println(String.format(Locale.ROOT, "Rank %d, epoch %d: loss %.6f", pg.rank(), epoch, losses[epoch]));
        }
        return new Result(model, losses, steps);
    }

    /**
     * The tutorial's {@code partition_dataset}: this rank's part of the embedded Fashion-MNIST training
     * subset (its first {@code limit} samples when {@code limit > 0}), in shuffled batches of
     * {@code 128 / world}.
     */
    static DataLoader<List<Tensor>> partitionDataset(ProcessGroup pg, int limit) {
        Dataset<List<Tensor>> dataset = FashionMnist.embedded(true);
        if (limit > 0 && limit < dataset.size()) {
            dataset = new DataPartitioner.Partition<>(dataset, IntStream.range(0, limit).toArray());
        }
        int size = pg.size();
        if (dataset.size() < size) {
            throw new IllegalArgumentException("the dataset has " + dataset.size() + " samples, fewer than the "
                    + size + " ranks that share it; raise --limit");
        }
        int bsz = Math.max(1, GLOBAL_BATCH / size);
        DataPartitioner<List<Tensor>> partitioner = new DataPartitioner<>(dataset, DataPartitioner.evenSizes(size),
                SEED);
        return DataLoader.builder(partitioner.use(pg.rank())).batchSize(bsz).shuffle(true).seed(SEED).build();
    }

    /**
     * The tutorial's {@code average_gradients}: sums each parameter's gradient over the ranks of {@code pg}
     * (all-reduce SUM) and divides it by their number. Parameters without a gradient are skipped (the same
     * ones on every rank, as the model and its graph are).
     */
    public static void averageGradients(Module model, ProcessGroup pg) {
        double size = pg.size();
        List<Tensor> grads = new ArrayList<>();
        List<Future<Void>> reductions = new ArrayList<>();
        for (Tensor param : model.parameters()) {
            Tensor grad = param.grad();
            if (grad != null) {
                grads.add(grad);
                reductions.add(pg.allReduce(grad, ReduceOp.SUM));
            }
        }
        for (int i = 0; i < grads.size(); i++) {
            reductions.get(i).await();
            grads.get(i).divi(size);
        }
    }

    /**
     * The example's command line, {@code [--epochs N] [--limit SAMPLES]}, as picocli reads it.
     *
     * @throws IllegalArgumentException for an unknown option or a bad value
     */
    static Options parse(String[] args) {
        Flags flags = new Flags();
        try {
            new CommandLine(flags).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        return flags.help ? null : new Options(flags.epochs, flags.limit);
    }

    /** The options of {@link #main}. */
    @Command(name = "SynchronousSgd", description = "the tutorial's synchronous SGD, one rank per process")
    static final class Flags {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
        boolean help;
        @Option(names = "--epochs", paramLabel = "N", description = "passes over the data (default: ${DEFAULT-VALUE})")
        int epochs = Options.defaults().epochs();
        @Option(names = "--limit", paramLabel = "SAMPLES",
                description = "train on the first SAMPLES images only, 0 for all (default: ${DEFAULT-VALUE})")
        int limit = Options.defaults().limit();
    }
}
