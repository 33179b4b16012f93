package io.tensorbus.workloads.interop;

import io.tensorbus.DType;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.io.PrintStream;

/**
 * The JVM side of a mixed job (examples/pytorch/trainer.py is the other): a PyTorch trainer, rank 0, trains a
 * linear Fashion-MNIST classifier and after each epoch broadcasts its weights; each JVM rank scores them on its
 * share of the test images and answers {@code [correct, seen]} by all-reduce, which the trainer prints. First the
 * trainer broadcasts the number of epochs.
 */
public final class PyTorchEvaluator {
    /** The classifier's inputs: a 28 x 28 image, flattened. */
    public static final int FEATURES = 784;
    /** The classifier's outputs: one logit per kind of clothing. */
    public static final int CLASSES = 10;

    private PyTorchEvaluator() {
    }

    /**
     * Evaluates every round the trainer broadcasts on this rank's share of {@code test} (every image whose index
     * modulo the JVM ranks, ranks 1 and up, is this rank's) and returns the last round's job-wide counts.
     *
     * @throws IllegalArgumentException when this is rank 0, the trainer's place
     */
    public static long[] run(ProcessGroup pg, FashionMnist test, PrintStream out) {
        if (pg.rank() == 0) {
            throw new IllegalArgumentException("rank 0 is the PyTorch trainer's; run the evaluator as rank 1 or up");
        }
        Tensor rounds = Tensor.zeros(DType.INT64, 1);
        pg.broadcast(rounds, 0).await();
        float[] images = test.images().toFloatArray();
        long[] labels = test.labels().toLongArray();
        long[] total = {0, 0};
        for (long round = 1; round <= rounds.toLongArray()[0]; round++) {
            Tensor weights = Tensor.zeros(CLASSES * FEATURES + CLASSES);
            pg.broadcast(weights, 0).await();
            long[] mine = score(weights.toFloatArray(), images, labels, pg.rank() - 1, pg.size() - 1);
            Tensor counts = Tensor.of(mine, 2);
            pg.allReduce(counts).await();
            total = counts.toLongArray();
            out.printf("round %d: rank %d scored %d of %d images right; the job's JVM ranks %d of %d (%.2f%%)%n",
                    round, pg.rank(), mine[0], mine[1], total[0], total[1], 100.0 * total[0] / total[1]);
        }
        return total;
    }

    /** {@code [correct, seen]} of the linear classifier {@code weights} ({@code W[10, 784]} then {@code b[10]}). */
    static long[] score(float[] weights, float[] images, long[] labels, int share, int shares) {
        long correct = 0;
        long seen = 0;
        for (int i = share; i < labels.length; i += shares) {
            if (predict(weights, images, i) == labels[i]) {
                correct++;
            }
            seen++;
        }
        return new long[] {correct, seen};
    }

    private static int predict(float[] weights, float[] images, int image) {
        int best = 0;
        double bestLogit = Double.NEGATIVE_INFINITY;
        for (int k = 0; k < CLASSES; k++) {
            double logit = weights[CLASSES * FEATURES + k];
            for (int j = 0; j < FEATURES; j++) {
                logit += (double) weights[k * FEATURES + j] * images[image * FEATURES + j];
            }
            if (logit > bestLogit) {
                bestLogit = logit;
                best = k;
            }
        }
        return best;
    }
}
