package io.tensorbus.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdxTest {
    @TempDir
    Path dir;

    /** An IDX image: magic, big-endian dims, then {@code data}. */
    static byte[] idx(int magic, int[] dims, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * dims.length + data.length);
        b.putInt(magic);
        for (int d : dims) {
            b.putInt(d);
        }
        return b.put(data).array();
    }

    static byte[] gzip(byte[] bytes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(bytes);
        }
        return out.toByteArray();
    }

    static byte[] pixels(int n) {
        byte[] data = new byte[n];
        for (int i = 0; i < n; i++) {
            data[i] = (byte) (i * 37);
        }
        return data;
    }

    private Path write(String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }

    private Path images(String name, int n, boolean gz) throws IOException {
        byte[] b = idx(Idx.IMAGES_MAGIC, new int[] {n, 2, 3}, pixels(n * 6));
        return write(name, gz ? gzip(b) : b);
    }

    private Path labels(String name, byte[] values, boolean gz) throws IOException {
        byte[] b = idx(Idx.LABELS_MAGIC, new int[] {values.length}, values);
        return write(name, gz ? gzip(b) : b);
    }

    private void checkImages(Tensor t) {
        assertEquals(DType.FLOAT32, t.dtype());
        assertArrayEquals(new int[] {4, 2, 3}, t.shape());
        float[] v = t.toFloatArray();
        byte[] p = pixels(24);
        for (int i = 0; i < v.length; i++) {
            assertEquals((p[i] & 0xff) / 255f, v[i], 0f, "pixel " + i);
        }
    }

    @Test
    void readsRawImages() throws IOException {
        checkImages(Idx.readImages(images("x", 4, false)));
    }

    @Test
    void readsGzipImagesWhateverTheName() throws IOException {
        checkImages(Idx.readImages(images("x.idx", 4, true)));
    }

    @Test
    void readsImagesAsRawInt32OnRequest() throws IOException {
        Tensor t = Idx.readImagesRaw(images("x.gz", 4, true));
        assertEquals(DType.INT32, t.dtype());
        assertArrayEquals(new int[] {4, 2, 3}, t.shape());
        int[] expected = new int[24];
        byte[] p = pixels(24);
        for (int i = 0; i < 24; i++) {
            expected[i] = p[i] & 0xff;
        }
        assertArrayEquals(expected, t.toIntArray());
    }

    @Test
    void readsLabelsRawAndGzip() throws IOException {
        byte[] values = {3, 0, 9, (byte) 200};
        for (boolean gz : new boolean[] {false, true}) {
            Tensor t = Idx.readLabels(labels("y" + gz, values, gz));
            assertEquals(DType.INT64, t.dtype());
            assertArrayEquals(new long[] {3, 0, 9, 200}, t.toLongArray());
        }
    }

    @Test
    void readsFromAStream() throws IOException {
        byte[] b = gzip(idx(Idx.IMAGES_MAGIC, new int[] {4, 2, 3}, pixels(24)));
        checkImages(Idx.readImages(new ByteArrayInputStream(b), "mem"));
        byte[] l = idx(Idx.LABELS_MAGIC, new int[] {2}, new byte[] {1, 2});
        assertArrayEquals(new long[] {1, 2}, Idx.readLabels(new ByteArrayInputStream(l), "mem").toLongArray());
    }

    @Test
    void readsAPairAndAnEmptyFile() throws IOException {
        Batch b = Idx.readPair(images("x", 4, true), labels("y", new byte[] {1, 2, 3, 4}, false));
        assertArrayEquals(new int[] {4, 2, 3}, b.inputs().shape());
        assertArrayEquals(new long[] {1, 2, 3, 4}, b.targets().toLongArray());
        Tensor empty = Idx.readImages(images("e", 0, false));
        assertArrayEquals(new int[] {0, 2, 3}, empty.shape());
    }

    @Test
    void badMagicIsRejected() throws IOException {
        Path f = write("bad", idx(0x12345678, new int[] {1, 1, 1}, new byte[1]));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("bad magic 0x12345678"), e.getMessage());
        assertTrue(e.getMessage().contains("0x00000803"), e.getMessage());
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
    }

    @Test
    void unsupportedElementTypeIsRejected() throws IOException {
        Path f = write("floats", idx(0x00000d03, new int[] {1, 1, 1}, new byte[4]));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("element type 0x0d"), e.getMessage());
    }

    @Test
    void wrongDimensionCountIsRejected() throws IOException {
        Path f = labels("labels", new byte[] {1, 2}, true);
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("has 1 dimensions"), e.getMessage());
        assertTrue(e.getMessage().contains("looks like a labels file"), e.getMessage());
    }

    @Test
    void truncatedDataIsRejected() throws IOException {
        byte[] full = idx(Idx.IMAGES_MAGIC, new int[] {4, 2, 3}, pixels(24));
        Path f = write("short", Arrays.copyOf(full, full.length - 5));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("truncated: the header promises 4 x 2 x 3 = 24 bytes of data but only 19"),
                e.getMessage());
    }

    @Test
    void truncatedHeaderIsRejected() throws IOException {
        Path f = write("header", Arrays.copyOf(idx(Idx.IMAGES_MAGIC, new int[] {4, 2, 3}, new byte[0]), 9));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("ends after 5 of the 12 bytes of the 3 dimension sizes"), e.getMessage());
    }

    @Test
    void truncatedGzipIsRejected() throws IOException {
        byte[] gz = gzip(idx(Idx.IMAGES_MAGIC, new int[] {4, 2, 3}, pixels(24)));
        Path f = write("cut.gz", Arrays.copyOf(gz, gz.length - 12));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void bytesAfterTheDataAreRejected() throws IOException {
        Path f = write("long", idx(Idx.LABELS_MAGIC, new int[] {2}, new byte[] {1, 2, 3}));
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readLabels(f));
        assertTrue(e.getMessage().contains("has bytes after the 2 bytes of data"), e.getMessage());
    }

    @Test
    void imageAndLabelCountsMustAgree() throws IOException {
        Path x = images("x", 4, false);
        Path y = labels("y", new byte[] {1, 2, 3}, false);
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Idx.readPair(x, y));
        assertTrue(e.getMessage().contains("holds 4 images but the labels file " + y + " holds 3 labels"),
                e.getMessage());
    }

    @Test
    void missingFileNamesTheFileAndWhatWasExpected() {
        Path f = dir.resolve("nope-images-idx3-ubyte.gz");
        NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> Idx.readImages(f));
        assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("expected an IDX images file (magic 0x00000803"), e.getMessage());
    }

    @Test
    void directoryIsNotAFile() {
        FileSystemException e = assertThrows(FileSystemException.class, () -> Idx.readLabels(dir));
        assertTrue(e.getMessage().contains("not a regular file; expected an IDX labels file"), e.getMessage());
    }
}
