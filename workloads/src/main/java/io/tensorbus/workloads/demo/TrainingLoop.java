package io.tensorbus.workloads.demo;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.data.Batch;
import io.tensorbus.data.BatchIterator;
import io.tensorbus.data.DataLoader;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The pieces of a classification training loop that the local demo and the DDP workload share: one epoch of
 * forward, negative log-likelihood loss, backward and optimizer step; counting correct predictions; and the
 * line printed per epoch. For DDP the model passed in is the {@code DistributedDataParallel} wrapper, whose
 * backward pass averages the gradients across ranks; the loop itself does not know.
 */
public final class TrainingLoop {
    private TrainingLoop() {
    }

    /**
     * What one epoch did on this process.
     *
     * @param lossSum the sum of the batches' mean losses
     * @param batches the number of batches trained
     * @param samples the number of images trained
     * @param seconds the wall time of the epoch
     */
    public record EpochStats(double lossSum, long batches, long samples, double seconds) {
        /** The mean of the batches' losses (0 for no batch). */
        public double meanLoss() {
            return lossSum / Math.max(1, batches);
        }

        /** Images per second. */
        public double samplesPerSecond() {
            return samples / Math.max(1e-9, seconds);
        }
    }

    /**
     * The batches one epoch trains: all of the loader's, or with a limit of {@code limit} images (0: none)
     * the fewest whose steps of {@code imagesPerStep} images cover it.
     */
    public static int batchesPerEpoch(int loaderBatches, int limit, int imagesPerStep) {
        return limit == 0 ? loaderBatches : Math.min(loaderBatches, (limit + imagesPerStep - 1) / imagesPerStep);
    }

    /** One training step: trains on a batch and returns its loss. */
    @FunctionalInterface
    public interface Step {
        /** Trains on {@code batch}; returns the batch's mean loss. */
        double train(Batch batch);
    }

    /**
     * Trains {@code model} for one epoch of {@code batches} batches of {@code loader} (whose next iteration is
     * the epoch wanted), drawing a progress bar on {@code progress} when it is a terminal.
     *
     * @param progress where the bar goes, or null for none (ranks other than 0)
     */
    public static EpochStats epoch(Module model, Optimizer optimizer, DataLoader<?> loader, int batches, int epoch,
                                   int epochs, PrintStream progress) {
        model.train();
        Device device = model.device();
        return epoch(batch -> {
            optimizer.zeroGrad(true);
            Tensor loss = Functional.nllLoss(model.forward(batch.inputs().to(device)), batch.targets().to(device));
            loss.backward();
            optimizer.step();
            return loss.item();
        }, loader, batches, epoch, epochs, progress);
    }

    /**
     * Runs {@code step} on {@code batches} batches of {@code loader} (whose next iteration is the epoch wanted),
     * drawing a progress bar on {@code progress} when it is a terminal.
     *
     * @param progress where the bar goes, or null for none
     */
    public static EpochStats epoch(Step step, DataLoader<?> loader, int batches, int epoch, int epochs,
                                   PrintStream progress) {
        double total = 0;
        long seen = 0;
        int done = 0;
        long start = System.nanoTime();
        try (BatchIterator it = loader.iterator()) {
            for (; done < batches && it.hasNext(); done++) {
                // The step's activations, gradients in flight and temporaries go back to the host cache as it ends,
                // still warm in the CPU's caches for the next step.
                try (MemoryScope scope = MemoryScope.open()) {
                    Batch batch = it.next();
                    total += step.train(batch);
                    seen += batch.inputs().size(0);
                }
                if (progress != null) {
                    ProgressBar.show(progress, epoch, epochs, done + 1, batches, total / (done + 1));
                }
            }
        }
        if (progress != null) {
            ProgressBar.finish(progress);
        }
        return new EpochStats(total, done, seen, (System.nanoTime() - start) / 1e9);
    }

    /** How many of {@code images} (rows {@code [N, 1, 28, 28]}) {@code model} labels right, in eval mode. */
    public static long correct(Module model, Tensor images, Tensor labels) {
        model.eval();
        Device device = model.device();
        try (var ignored = Autograd.noGrad()) {
            Tensor predicted = model.forward(images.to(device)).argmax(1, false);
            return Math.round(predicted.eq(labels.to(device)).to(DType.FLOAT32).sum().item());
        }
    }

    /** {@code epoch 2/5  loss 0.5123  3.1 s  4120 samples/s}. */
    public static String epochLine(int epoch, int epochs, double meanLoss, double seconds, double samplesPerSecond) {
        return String.format(Locale.ROOT, "epoch %d/%d  loss %.4f  %.1f s  %.0f samples/s", epoch, epochs, meanLoss,
                seconds, samplesPerSecond);
    }

    /** {@code test accuracy 81.20%}. */
    public static String accuracyLine(double accuracy) {
        return String.format(Locale.ROOT, "test accuracy %.2f%%", accuracy * 100);
    }
}
