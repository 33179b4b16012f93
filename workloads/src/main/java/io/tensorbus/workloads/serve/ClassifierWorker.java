package io.tensorbus.workloads.serve;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;

/**
 * The serving side of {@link TrainThenServe}: its own copy of the trained network, handed over as a state dict, and
 * the RPC function {@value #CLASSIFY}, which takes 8-bit grayscale images (a {@code byte[]} of N x 784 pixels, row
 * by row) and answers their classes (an {@code int[]} of N), normalized as the training data was. Thread-safe: calls
 * are serialized on the network.
 */
final class ClassifierWorker {
    /** The function it serves. */
    static final String CLASSIFY = "classify";
    private static final int PIXELS = FashionMnist.IMAGE_SIZE * FashionMnist.IMAGE_SIZE;

    private final Module net;

    /** A network of the trained one's shape, with {@code trained}'s parameters and buffers copied in. */
    ClassifierWorker(Map<String, Tensor> trained) {
        MnistNet copy = new MnistNet(new Generator(0));
        copy.loadStateDict(trained, true);
        copy.eval();
        this.net = copy;
    }

    /**
     * The classes of the images in {@code pixels}.
     *
     * @throws IllegalArgumentException for anything but whole 28 x 28 images
     */
    synchronized int[] classify(byte[] pixels) {
        if (pixels.length == 0 || pixels.length % PIXELS != 0) {
            throw new IllegalArgumentException("classify takes 8-bit images of 28 x 28 pixels (N x 784 bytes), got "
                    + pixels.length + " bytes");
        }
        int n = pixels.length / PIXELS;
        float[] x = new float[pixels.length];
        FashionMnist.Normalization norm = FashionMnist.Normalization.FASHION_MNIST;
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (((pixels[i] & 0xff) / 255.0 - norm.mean()) / norm.std());
        }
        try (var ignored = Autograd.noGrad()) {
            Tensor classes = net.forward(Tensor.of(x, n, 1, FashionMnist.IMAGE_SIZE, FashionMnist.IMAGE_SIZE))
                    .argmax(1, false);
            int[] out = new int[n];
            for (int i = 0; i < n; i++) {
                out[i] = (int) classes.getDouble(i);
            }
            return out;
        }
    }

    /** The RPC function's body: one argument, the pixels. */
    Object call(List<Object> args) {
        if (args.size() != 1 || !(args.get(0) instanceof byte[] pixels)) {
            throw new IllegalArgumentException("classify takes one argument, a byte[] of 28 x 28 images");
        }
        return classify(pixels);
    }
}
