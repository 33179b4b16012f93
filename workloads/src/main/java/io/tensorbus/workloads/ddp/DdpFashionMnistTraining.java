package io.tensorbus.workloads.ddp;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.data.DataLoader;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.checkpoint.Checkpoint;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.parallel.DistributedSampler;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.TrainingLoop;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Data-parallel training of the PyTorch distributed tutorial's network on Fashion-MNIST, one rank of it: the
 * local demo's settings (SGD lr 0.01, momentum 0.5, global batch 128, seed 1234) with
 * {@link DistributedDataParallel} averaging the gradients and a {@link DistributedSampler} giving each rank
 * its share of every epoch. Each rank takes {@code batchSize / worldSize} images per step. The loss printed
 * per epoch is the mean over every rank's batches, the throughput counts every rank's images, and the test
 * accuracy is computed by all ranks on a slice of the test set each and summed; only rank 0 prints, and
 * draws the progress bar.
 */
public final class DdpFashionMnistTraining {
    /**
     * What a run ended with; the same on every rank.
     *
     * @param accuracy the test accuracy in [0, 1]
     * @param lastLoss the mean loss of the last epoch over all ranks
     * @param samplesPerSecond images per second of the last epoch over all ranks
     * @param model the trained network (the module DDP wrapped)
     */
    public record Result(double accuracy, double lastLoss, double samplesPerSecond, Module model) {
    }

    private final FashionMnistTraining.Options options;
    private final CommHookChoice commHook;
    private final Path checkpointDir;

    /** A run with the given settings ({@code batchSize} is the global batch) and DDP's default all-reduce. */
    public DdpFashionMnistTraining(FashionMnistTraining.Options options) {
        this(options, CommHookChoice.allReduce(), null);
    }

    /**
     * A run with the given settings and communication hook that, with {@code checkpointDir}, saves the model and the
     * optimizer there after every epoch and resumes from what it finds there (after a restart by
     * {@code tensorbus launch --max-restarts}, say).
     *
     * @param checkpointDir a directory every rank reads (rank 0 writes it), or null for no checkpoints
     */
    public DdpFashionMnistTraining(FashionMnistTraining.Options options, CommHookChoice commHook, Path checkpointDir) {
        this.options = Objects.requireNonNull(options, "options");
        this.commHook = Objects.requireNonNull(commHook, "commHook");
        this.checkpointDir = checkpointDir;
    }

    /**
     * Trains this rank of {@code group}; blocks (every collective is awaited), so never call it on a Vert.x
     * event loop. Rank 0 prints to {@code out}; the other ranks print nothing.
     *
     * @throws IOException when the data directory cannot be read
     * @throws IllegalArgumentException when the global batch is smaller than the group
     */
    public Result run(ProcessGroup group, PrintStream out) throws IOException {
        int world = group.size();
        int perRank = options.batchSize() / world;
        if (perRank < 1) {
            throw new IllegalArgumentException("batch size " + options.batchSize() + " is smaller than the world size "
                    + world + ": every rank needs at least one image per step");
        }
        PrintStream rank0 = group.rank() == 0 ? out : null;
        FashionMnist train = options.dataset(true);
        FashionMnist test = options.dataset(false);
        Generator generator = new Generator(options.seed());
        MnistNet net = new MnistNet(generator);
        net.to(options.device());
        DistributedDataParallel ddp = DistributedDataParallel.builder(net, group).build();
        CommHookChoice.Registered hook = commHook.create();
        if (!commHook.name().equals("allreduce")) {
            ddp.registerCommHook(hook.hook());
        }
        SGD sgd = SGD.builder().lr(options.lr()).momentum(options.momentum()).build(ddp.parameters());
        DistributedSampler sampler = DistributedSampler.builder(train).group(group).seed(options.seed()).build();
        DataLoader<?> loader = DataLoader.builder(train).batchSize(perRank).sampler(sampler).build();
        int batches = TrainingLoop.batchesPerEpoch(loader.size(), options.trainLimit(), perRank * world);
        header(rank0, group, train.size(), test.size(), perRank, batches);
        double[] last = {Double.NaN, 0};
        for (int epoch = resume(group, ddp, sgd, rank0) + 1; epoch <= options.epochs(); epoch++) {
            // The loader hands its epoch to the sampler (DistributedSampler.set_epoch): a new shuffle per epoch,
            // the same on every rank.
            loader.setEpoch(epoch - 1);
            if (checkpointDir != null) {
                // Each epoch's dropout masks from its own seed, so that a run resumed after this epoch's
                // checkpoint draws the masks an uninterrupted run draws.
                generator.manualSeed(options.seed() * 1_000_003L + epoch);
            }
            last = epoch(group, ddp, sgd, loader, batches, epoch, rank0);
            if (checkpointDir != null) {
                Checkpoint.save(checkpointDir, ddp, sgd, Map.of(EPOCH, epoch), group);
            }
        }
        double accuracy = accuracy(group, ddp.module(), test);
        if (rank0 != null) {
            long elements = ddp.parameters().stream().mapToLong(Tensor::numel).sum();
            rank0.println(commHook.report(hook, elements));
            rank0.println(TrainingLoop.accuracyLine(accuracy));
            rank0.flush();
        }
        return new Result(accuracy, last[0], last[1], ddp.module());
    }

    /** The checkpoint entry holding the last epoch it saved. */
    static final String EPOCH = "epoch";

    /**
     * Loads the checkpoint in {@link #checkpointDir} when there is one; returns the epoch it was saved after, or 0.
     */
    private int resume(ProcessGroup group, DistributedDataParallel ddp, SGD sgd, PrintStream rank0)
            throws IOException {
        if (checkpointDir == null || !Checkpoint.exists(checkpointDir)) {
            return 0;
        }
        int epoch = ((Number) Checkpoint.load(checkpointDir, ddp, sgd, group).get(EPOCH)).intValue();
        if (rank0 != null) {
            rank0.println("resumed from the checkpoint in " + checkpointDir + " after epoch " + epoch
                    + " (restart " + Distributed.environment().getOrDefault("TORCHELASTIC_RESTART_COUNT", "0") + ")");
            rank0.flush();
        }
        return epoch;
    }

    /** Trains one epoch; returns the mean loss and the images per second over all ranks. */
    private double[] epoch(ProcessGroup group, DistributedDataParallel ddp, SGD sgd, DataLoader<?> loader,
                           int batches, int epoch, PrintStream rank0) {
        TrainingLoop.EpochStats s = TrainingLoop.epoch(ddp, sgd, loader, batches, epoch, options.epochs(), rank0);
        double[] sums = allReduceSum(group, s.lossSum(), s.batches(), s.samples());
        double meanLoss = sums[0] / Math.max(1, sums[1]);
        double samplesPerSecond = sums[2] / Math.max(1e-9, s.seconds());
        if (rank0 != null) {
            rank0.println(TrainingLoop.epochLine(epoch, options.epochs(), meanLoss, s.seconds(), samplesPerSecond));
            rank0.flush();
        }
        return new double[] {meanLoss, samplesPerSecond};
    }

    /**
     * The accuracy on the whole test set, each rank scoring a contiguous slice of it (the replicas are equal
     * after DDP training, so the slices add up to what one model scores on all of it).
     */
    private double accuracy(ProcessGroup group, Module model, FashionMnist test) {
        int n = test.size();
        int from = (int) ((long) n * group.rank() / group.size());
        int to = (int) ((long) n * (group.rank() + 1) / group.size());
        long correct = to == from ? 0 : TrainingLoop.correct(model, test.images().narrow(0, from, to - from),
                test.labels().narrow(0, from, to - from));
        double[] sums = allReduceSum(group, correct, to - from);
        return sums[0] / Math.max(1, sums[1]);
    }

    /** The element-wise sums of {@code values} over the group's ranks (float64, exact for counts). */
    private double[] allReduceSum(ProcessGroup group, double... values) {
        // On the training device: a device backend (opencl, nccl) takes only its device's tensors.
        Tensor t = Tensor.of(values.clone(), values.length).to(options.device());
        group.allReduce(t, ReduceOp.SUM).await();
        return t.toDoubleArray();
    }

    private void header(PrintStream rank0, ProcessGroup group, int trainSize, int testSize, int perRank,
                        int batches) {
        if (rank0 == null) {
            return;
        }
        int world = group.size();
        rank0.printf(Locale.ROOT, "tensorbus DDP: tutorial network on Fashion-MNIST (%s), %d training and %d test"
                + " images; %d rank(s) x batch %d (global %d), %d steps per epoch; SGD lr %s momentum %s;"
                + " backend %s; on %s%n", options.dataName(), trainSize, testSize, world, perRank, perRank * world,
                batches, options.lr(), options.momentum(), group.backendName(), options.device());
        rank0.flush();
    }
}
