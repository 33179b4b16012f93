package io.tensorbus.workloads.interop;

import io.tensorbus.DType;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.PrintStream;
import java.util.Arrays;

/**
 * A JVM rank that feeds a PyTorch trainer (examples/pytorch/consumer.py): rank 0 here, it broadcasts
 * {@code [batches, batchSize]}, then sends each batch to rank 1 by {@code send}, the images ({@code float32
 * [B, 784]}, tag {@value #IMAGES_TAG}) then the labels ({@code int64 [B]}, tag {@value #LABELS_TAG}); the trainer
 * answers {@code [loss, accuracy]} of its last batches with tag {@value #RESULT_TAG}.
 */
public final class BatchFeeder {
    /** The tag of a batch's images. */
    public static final int IMAGES_TAG = 1;
    /** The tag of a batch's labels. */
    public static final int LABELS_TAG = 2;
    /** The tag of the trainer's answer. */
    public static final int RESULT_TAG = 3;

    private BatchFeeder() {
    }

    /**
     * Sends {@code batches} batches of {@code batchSize} images of {@code train} (wrapping around) to rank 1 and
     * returns its answer, {@code [loss, accuracy]}.
     *
     * @throws IllegalArgumentException when this is not rank 0, or a count is not positive
     */
    public static float[] run(ProcessGroup pg, FashionMnist train, int batches, int batchSize, PrintStream out) {
        if (pg.rank() != 0) {
            throw new IllegalArgumentException("the feeder is rank 0 and its trainer rank 1; this is rank "
                    + pg.rank());
        }
        if (batches < 1 || batchSize < 1) {
            throw new IllegalArgumentException("batches=" + batches + " and batchSize=" + batchSize
                    + " must be at least 1");
        }
        pg.broadcast(Tensor.of(new long[] {batches, batchSize}, 2), 0).await();
        float[] images = train.images().toFloatArray();
        long[] labels = train.labels().toLongArray();
        int n = labels.length;
        for (int b = 0; b < batches; b++) {
            float[] x = new float[batchSize * PyTorchEvaluator.FEATURES];
            long[] y = new long[batchSize];
            for (int i = 0; i < batchSize; i++) {
                int item = (b * batchSize + i) % n;
                System.arraycopy(images, item * PyTorchEvaluator.FEATURES, x, i * PyTorchEvaluator.FEATURES,
                        PyTorchEvaluator.FEATURES);
                y[i] = labels[item];
            }
            Future<Void> sentImages = pg.isend(Tensor.of(x, batchSize, PyTorchEvaluator.FEATURES), 1, IMAGES_TAG);
            pg.isend(Tensor.of(y, batchSize), 1, LABELS_TAG).await();
            sentImages.await();
        }
        Tensor result = Tensor.zeros(DType.FLOAT32, 2);
        pg.irecv(result, 1, RESULT_TAG).await();
        float[] r = result.toFloatArray();
        out.println("sent " + batches + " batches of " + batchSize + " images; the PyTorch trainer answered loss "
                + r[0] + ", accuracy " + r[1] + " on its last batches " + Arrays.toString(r));
        return r;
    }
}
