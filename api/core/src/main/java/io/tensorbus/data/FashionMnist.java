package io.tensorbus.data;

import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Zalando's Fashion-MNIST: 28x28 grey images of 10 kinds of clothing, 60,000 for training and 10,000 for
 * testing, as {@code torchvision.datasets.FashionMNIST} with {@code ToTensor()} and {@code Normalize}. Item
 * {@code i} is {@code [image float32 [1, 28, 28], label int64 0-d]}; {@link #images()} and {@link #labels()}
 * hold all of them, {@code [N, 1, 28, 28]} and {@code [N]}.
 *
 * <p>{@link #load(Path, boolean)} reads the four standard files, plain or gzip ({@code train-images-idx3-ubyte},
 * {@code train-labels-idx1-ubyte}, {@code t10k-images-idx3-ubyte}, {@code t10k-labels-idx1-ubyte}, each with
 * or without {@code .gz}), for instance from {@link #DEBIAN_DIR} where Debian's {@code dataset-fashion-mnist}
 * package puts them.
 *
 * <p>{@link #embedded(boolean)} reads a real subset shipped in this jar under
 * {@code io/tensorbus/data/fashion-mnist/}, so that examples and tests run on a machine without the data: the
 * first 10,000 of the 60,000 training images and labels, and the first 1,000 of the 10,000 test images and
 * labels, unchanged, in the same gzip IDX files (about 4.8 MB in all; the full test set alone would be 4.4 MB).
 * Fashion-MNIST is Copyright (c) 2017 Zalando SE, under the MIT license; the notice ships beside the files.
 *
 * <p>By default the pixels are normalised as the anchor {@code torch_fashion_mnist.py} does:
 * {@code (x / 255 - 0.2860) / 0.3530} in float32 ({@link Normalization#FASHION_MNIST}, the mean and standard
 * deviation of the Fashion-MNIST training pixels); {@link Normalization#MNIST} is the PyTorch tutorial's
 * {@code Normalize((0.1307,), (0.3081,))} (MNIST's statistics) and {@link Normalization#NONE} is
 * {@code ToTensor()} alone, {@code [0, 1]}.
 */
public final class FashionMnist implements Dataset<List<Tensor>>, Gather {
    /** Where Debian's {@code dataset-fashion-mnist} package installs the four gzip files. */
    public static final Path DEBIAN_DIR = Path.of("/usr/share/datasets/fashion-mnist");
    /** Image height and width. */
    public static final int IMAGE_SIZE = 28;
    /** The class names, by label. */
    public static final List<String> CLASSES = List.of("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
            "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot");

    private static final String RESOURCE_DIR = "/io/tensorbus/data/fashion-mnist/";

    /**
     * The normalisation {@code (x / 255 - mean) / std} applied to every pixel, in float32.
     *
     * @param mean subtracted after scaling to {@code [0, 1]}
     * @param std divided by after subtracting the mean; positive
     */
    public record Normalization(double mean, double std) {
        /** Fashion-MNIST's own pixel statistics, as the anchor uses: mean 0.2860, std 0.3530. */
        public static final Normalization FASHION_MNIST = new Normalization(0.2860, 0.3530);
        /** The PyTorch MNIST tutorial's {@code Normalize((0.1307,), (0.3081,))}. */
        public static final Normalization MNIST = new Normalization(0.1307, 0.3081);
        /** No normalisation: {@code ToTensor()} alone, pixels in {@code [0, 1]}. */
        public static final Normalization NONE = new Normalization(0, 1);

        /**
         * Checks the values.
         *
         * @throws IllegalArgumentException when {@code std} is not positive or either value is not finite
         */
        public Normalization {
            if (!Double.isFinite(mean) || !Double.isFinite(std) || std <= 0) {
                throw new IllegalArgumentException("normalisation needs a finite mean and a positive finite std, got"
                        + " mean=" + mean + " std=" + std);
            }
        }
    }

    private final boolean train;
    private final Normalization normalization;
    private final Tensor images;
    private final Tensor labels;

    private FashionMnist(boolean train, Normalization normalization, Tensor images, Tensor labels) {
        this.train = train;
        this.normalization = normalization;
        this.images = images;
        this.labels = labels;
    }

    /**
     * Reads the training or test split from {@code dir}, normalised with {@link Normalization#FASHION_MNIST}.
     *
     * @throws NoSuchFileException when the directory or a file is missing (the message names what was expected)
     * @throws TensorFormatException when a file is malformed, not 28x28, or the counts disagree
     */
    public static FashionMnist load(Path dir, boolean train) throws IOException {
        return load(dir, train, Normalization.FASHION_MNIST);
    }

    /**
     * Reads the training or test split from {@code dir} with the given normalisation.
     *
     * @throws NoSuchFileException when the directory or a file is missing (the message names what was expected)
     * @throws TensorFormatException when a file is malformed, not 28x28, or the counts disagree
     */
    public static FashionMnist load(Path dir, boolean train, Normalization normalization) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir.toString(), null, "no such directory; expected a Fashion-MNIST directory"
                    + " holding " + fileName(train, true) + "(.gz) and " + fileName(train, false) + "(.gz) (Debian:"
                    + " apt-get install dataset-fashion-mnist puts them in " + DEBIAN_DIR + ")");
        }
        Idx.Raw x = Idx.read(find(dir, fileName(train, true)), 3);
        Idx.Raw y = Idx.read(find(dir, fileName(train, false)), 1);
        return of(train, normalization, x, y);
    }

    /** The embedded subset (see the class comment), normalised with {@link Normalization#FASHION_MNIST}. */
    public static FashionMnist embedded(boolean train) {
        return embedded(train, Normalization.FASHION_MNIST);
    }

    /**
     * The embedded subset (see the class comment) with the given normalisation.
     *
     * @throws UncheckedIOException when the resource is missing or unreadable (a broken jar)
     */
    public static FashionMnist embedded(boolean train, Normalization normalization) {
        try {
            Idx.Raw x = resource(fileName(train, true) + ".gz", 3);
            Idx.Raw y = resource(fileName(train, false) + ".gz", 1);
            return of(train, normalization, x, y);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the embedded Fashion-MNIST subset: " + e.getMessage(), e);
        }
    }

    /** The standard file name of a split's images or labels, without {@code .gz}. */
    static String fileName(boolean train, boolean images) {
        return (train ? "train" : "t10k") + (images ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
    }

    private static Path find(Path dir, String name) throws NoSuchFileException {
        for (String candidate : new String[] {name, name + ".gz"}) {
            if (Files.isRegularFile(dir.resolve(candidate))) {
                return dir.resolve(candidate);
            }
        }
        throw new NoSuchFileException(dir.resolve(name + ".gz").toString(), null, "neither " + name + " nor " + name
                + ".gz exists in " + dir + "; expected the Fashion-MNIST "
                + (name.contains("images") ? "images" : "labels")
                + " file in IDX format, plain or gzip");
    }

    private static Idx.Raw resource(String name, int ndim) throws IOException {
        try (InputStream in = FashionMnist.class.getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null) {
                throw new NoSuchFileException("classpath:" + RESOURCE_DIR + name, null,
                        "missing resource; expected it in the tensorbus-core jar");
            }
            return Idx.read(in, "classpath:" + RESOURCE_DIR + name, ndim);
        }
    }

    private static FashionMnist of(boolean train, Normalization norm, Idx.Raw x, Idx.Raw y) throws IOException {
        Objects.requireNonNull(norm, "normalization");
        if (x.dims()[1] != IMAGE_SIZE || x.dims()[2] != IMAGE_SIZE) {
            throw new TensorFormatException(x.source(), "images are " + x.dims()[1] + "x" + x.dims()[2]
                    + "; Fashion-MNIST images are 28x28");
        }
        Idx.requireSameCount(x, y);
        checkLabels(y);
        Tensor images = Idx.floats(x, Idx.table(norm.mean(), norm.std()), x.count(), 1, IMAGE_SIZE, IMAGE_SIZE);
        return new FashionMnist(train, norm, images, Idx.labels(y));
    }

    private static void checkLabels(Idx.Raw y) throws TensorFormatException {
        byte[] data = y.data();
        for (int i = 0; i < data.length; i++) {
            if ((data[i] & 0xff) >= CLASSES.size()) {
                throw new TensorFormatException(y.source(), "label " + (data[i] & 0xff) + " at index " + i
                        + " is not one of the " + CLASSES.size() + " Fashion-MNIST classes 0.." + (CLASSES.size() - 1));
            }
        }
    }

    /** Whether this is the training split (else the test split). */
    public boolean train() {
        return train;
    }

    /** The normalisation applied to the pixels. */
    public Normalization normalization() {
        return normalization;
    }

    /** All images, float32 {@code [N, 1, 28, 28]}. */
    public Tensor images() {
        return images;
    }

    /** All labels, int64 {@code [N]}, each in {@code 0..9} (see {@link #CLASSES}). */
    public Tensor labels() {
        return labels;
    }

    @Override
    public int size() {
        return labels.size(0);
    }

    /** {@code [image float32 [1, 28, 28], label int64 0-d]}, views of {@link #images()} and {@link #labels()}. */
    @Override
    public List<Tensor> get(int index) {
        Objects.checkIndex(index, size());
        return List.of(images.get(index), labels.get(index));
    }

    @Override
    public Batch gather(int[] indices) {
        return new Batch(TensorDataset.rows(images, indices), TensorDataset.rows(labels, indices));
    }

    @Override
    public String toString() {
        return "FashionMnist(" + (train ? "train" : "test") + ", " + size() + " images " + Arrays.toString(
                images.shape()) + ", normalization " + normalization + ")";
    }
}
