package io.tensorbus.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tensorbus.DType;
import io.tensorbus.data.FashionMnist.Normalization;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FashionMnistTest {
    @TempDir
    Path dir;

    private static float unit(int b) {
        return b / 255f;
    }

    @Test
    void embeddedSplitsHaveTheDocumentedSizes() {
        FashionMnist train = FashionMnist.embedded(true);
        FashionMnist test = FashionMnist.embedded(false);
        assertEquals(10_000, train.size());
        assertEquals(1_000, test.size());
        assertArrayEquals(new int[] {10_000, 1, 28, 28}, train.images().shape());
        assertArrayEquals(new int[] {1_000}, test.labels().shape());
        assertEquals(DType.FLOAT32, train.images().dtype());
        assertEquals(DType.INT64, train.labels().dtype());
        assertTrue(train.train());
    }

    @Test
    void embeddedLabelsAndPixelsAreTheRealOnes() {
        FashionMnist test = FashionMnist.embedded(false, Normalization.NONE);
        FashionMnist train = FashionMnist.embedded(true, Normalization.NONE);
        assertArrayEquals(new long[] {9, 2, 1, 1, 6, 1, 4, 6, 5, 7},
                Arrays.copyOf(test.labels().toLongArray(), 10));
        assertArrayEquals(new long[] {9, 0, 0, 3, 0, 2, 7, 2, 5, 5},
                Arrays.copyOf(train.labels().toLongArray(), 10));
        // Row 14 of test image 0 starts 00 00 00 00 00 00 02 04 01 00 00 00 62 (hex).
        assertEquals(unit(2), test.images().getDouble(0, 0, 14, 6), 0.0);
        assertEquals(unit(0x62), test.images().getDouble(0, 0, 14, 12), 0.0);
        // Sums of the raw bytes of the first images, from the Debian files.
        assertEquals(33456, Math.round(test.images().get(0).sum().item() * 255));
        assertEquals(76247, Math.round(train.images().get(0).sum().item() * 255));
        assertEquals(0.0, test.images().min().item());
        assertEquals(1.0, test.images().max().item());
    }

    @Test
    void defaultNormalizationMatchesTheAnchor() {
        FashionMnist test = FashionMnist.embedded(false);
        assertEquals(Normalization.FASHION_MNIST, test.normalization());
        float zero = (0f - 0.2860f) / 0.3530f;
        assertEquals(zero, test.images().getDouble(0, 0, 0, 0), 0.0);
        assertEquals((unit(0x62) - 0.2860f) / 0.3530f, test.images().getDouble(0, 0, 14, 12), 0.0);
        assertEquals(zero, test.images().min().item(), 0.0);
        assertEquals((1f - 0.2860f) / 0.3530f, test.images().max().item(), 0.0);
        FashionMnist tutorial = FashionMnist.embedded(false, Normalization.MNIST);
        assertEquals((0f - 0.1307f) / 0.3081f, tutorial.images().getDouble(0, 0, 0, 0), 0.0);
    }

    @Test
    void itemsAreImageAndLabel() {
        FashionMnist test = FashionMnist.embedded(false);
        List<Tensor> item = test.get(0);
        assertArrayEquals(new int[] {1, 28, 28}, item.get(0).shape());
        assertEquals(9, item.get(1).longItem());
        assertThrows(IndexOutOfBoundsException.class, () -> test.get(1000));
        Batch b = DataLoader.of(test, 64).iterator().next();
        assertArrayEquals(new int[] {64, 1, 28, 28}, b.inputs().shape());
        assertArrayEquals(Arrays.copyOf(test.labels().toLongArray(), 64), b.targets().toLongArray());
    }

    @Test
    void loadsTheDebianFilesWhenInstalled() throws IOException {
        assumeTrue(Files.isDirectory(FashionMnist.DEBIAN_DIR), "dataset-fashion-mnist is not installed");
        FashionMnist test = FashionMnist.load(FashionMnist.DEBIAN_DIR, false);
        assertEquals(10_000, test.size());
        FashionMnist embedded = FashionMnist.embedded(false);
        assertArrayEquals(embedded.labels().toLongArray(),
                Arrays.copyOf(test.labels().toLongArray(), 1000));
        assertArrayEquals(embedded.images().toFloatArray(),
                test.images().narrow(0, 0, 1000).contiguous().toFloatArray());
    }

    @Test
    void loadsPlainFilesFromADirectory() throws IOException {
        int n = 3;
        byte[] px = new byte[n * 28 * 28];
        px[5] = (byte) 255;
        Files.write(dir.resolve("t10k-images-idx3-ubyte"), IdxTest.idx(Idx.IMAGES_MAGIC, new int[] {n, 28, 28}, px));
        Files.write(dir.resolve("t10k-labels-idx1-ubyte.gz"),
                IdxTest.gzip(IdxTest.idx(Idx.LABELS_MAGIC, new int[] {n}, new byte[] {7, 8, 9})));
        FashionMnist d = FashionMnist.load(dir, false, Normalization.NONE);
        assertEquals(3, d.size());
        assertEquals(1.0, d.images().getDouble(0, 0, 0, 5));
        assertArrayEquals(new long[] {7, 8, 9}, d.labels().toLongArray());
    }

    @Test
    void missingDirectoryIsExplained() {
        Path missing = dir.resolve("none");
        NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> FashionMnist.load(missing, true));
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("train-images-idx3-ubyte(.gz)"), e.getMessage());
    }

    @Test
    void missingFileIsExplained() {
        NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> FashionMnist.load(dir, false));
        assertTrue(e.getMessage().contains("neither t10k-images-idx3-ubyte nor t10k-images-idx3-ubyte.gz exists in "
                + dir), e.getMessage());
    }

    @Test
    void imagesMustBe28By28() throws IOException {
        Files.write(dir.resolve("t10k-images-idx3-ubyte"),
                IdxTest.idx(Idx.IMAGES_MAGIC, new int[] {1, 2, 2}, new byte[4]));
        Files.write(dir.resolve("t10k-labels-idx1-ubyte"), IdxTest.idx(Idx.LABELS_MAGIC, new int[] {1}, new byte[1]));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> FashionMnist.load(dir, false));
        assertTrue(e.getMessage().contains("images are 2x2; Fashion-MNIST images are 28x28"), e.getMessage());
    }

    @Test
    void labelsMustBeClasses() throws IOException {
        Files.write(dir.resolve("t10k-images-idx3-ubyte"),
                IdxTest.idx(Idx.IMAGES_MAGIC, new int[] {2, 28, 28}, new byte[2 * 784]));
        Files.write(dir.resolve("t10k-labels-idx1-ubyte"),
                IdxTest.idx(Idx.LABELS_MAGIC, new int[] {2}, new byte[] {1, 12}));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> FashionMnist.load(dir, false));
        assertTrue(e.getMessage().contains("label 12 at index 1 is not one of the 10"), e.getMessage());
    }

    @Test
    void badNormalizationIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new Normalization(0.5, 0));
    }
}
