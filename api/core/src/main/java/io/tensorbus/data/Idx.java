package io.tensorbus.data;

import io.tensorbus.DType;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Tensor;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads the IDX format of MNIST and Fashion-MNIST: images (magic {@code 0x00000803}, uint8 {@code [N, rows, cols]})
 * and labels (magic {@code 0x00000801}, uint8 {@code [N]}), big-endian dimensions, plain or gzip-compressed
 * (detected by the gzip magic {@code 1f 8b}, whatever the file name).
 *
 * <p>Images come back as float32 scaled to {@code [0, 1]} (PyTorch's {@code ToTensor}: {@code x / 255} in
 * float32) or, on request, as the raw bytes widened to int32; labels as int64. A malformed file fails with a
 * {@link TensorFormatException} that names it and says what was expected: a bad magic, another dimension
 * count, truncated data, bytes after the data, image and label counts that differ; a missing file with a
 * {@link NoSuchFileException} that says which file was expected.
 */
public final class Idx {
    /** The magic of an images file: unsigned bytes, 3 dimensions. */
    public static final int IMAGES_MAGIC = 0x00000803;
    /** The magic of a labels file: unsigned bytes, 1 dimension. */
    public static final int LABELS_MAGIC = 0x00000801;

    private static final String IMAGES = "an IDX images file (magic 0x00000803: uint8 [N, rows, cols]), plain or gzip";
    private static final String LABELS = "an IDX labels file (magic 0x00000801: uint8 [N]), plain or gzip";
    private static final float[] UNIT = table(0, 1);

    private Idx() {
    }

    /** The dimensions and bytes of one IDX file. */
    record Raw(String source, int[] dims, byte[] data) {
        int count() {
            return dims[0];
        }
    }

    /**
     * Reads an images file as float32 {@code [N, rows, cols]} in {@code [0, 1]}.
     *
     * @throws NoSuchFileException when the file does not exist
     * @throws TensorFormatException when it is not a well-formed IDX images file
     */
    public static Tensor readImages(Path file) throws IOException {
        Raw raw = read(file, 3);
        return floats(raw, UNIT, raw.dims());
    }

    /**
     * Reads an images file as its raw pixel values {@code 0..255}, int32 {@code [N, rows, cols]}.
     *
     * @throws NoSuchFileException when the file does not exist
     * @throws TensorFormatException when it is not a well-formed IDX images file
     */
    public static Tensor readImagesRaw(Path file) throws IOException {
        Raw raw = read(file, 3);
        int[] values = new int[raw.data().length];
        for (int i = 0; i < values.length; i++) {
            values[i] = raw.data()[i] & 0xff;
        }
        return Tensor.of(values, raw.dims());
    }

    /**
     * Reads a labels file as int64 {@code [N]}.
     *
     * @throws NoSuchFileException when the file does not exist
     * @throws TensorFormatException when it is not a well-formed IDX labels file
     */
    public static Tensor readLabels(Path file) throws IOException {
        return labels(read(file, 1));
    }

    /**
     * Reads an images file and its labels file as one (inputs, targets) pair: float32 {@code [N, rows, cols]}
     * in {@code [0, 1]} and int64 {@code [N]}.
     *
     * @throws NoSuchFileException when a file does not exist
     * @throws TensorFormatException when a file is malformed or the two hold different counts
     */
    public static Batch readPair(Path images, Path labels) throws IOException {
        Raw x = read(images, 3);
        Raw y = read(labels, 1);
        requireSameCount(x, y);
        return new Batch(floats(x, UNIT, x.dims()), labels(y));
    }

    /**
     * Reads an images file from a stream (a class-path resource, say) as float32 {@code [N, rows, cols]} in
     * {@code [0, 1]}; the stream is read to its end but not closed.
     *
     * @param source the name to put in error messages
     * @throws TensorFormatException when the bytes are not a well-formed IDX images file
     */
    public static Tensor readImages(InputStream in, String source) throws IOException {
        Raw raw = read(in, source, 3);
        return floats(raw, UNIT, raw.dims());
    }

    /**
     * Reads a labels file from a stream as int64 {@code [N]}; the stream is read to its end but not closed.
     *
     * @param source the name to put in error messages
     * @throws TensorFormatException when the bytes are not a well-formed IDX labels file
     */
    public static Tensor readLabels(InputStream in, String source) throws IOException {
        return labels(read(in, source, 1));
    }

    // ------------------------------------------------------------------------------------------ internals

    static Raw read(Path file, int ndim) throws IOException {
        String expected = ndim == 3 ? IMAGES : LABELS;
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such file; expected " + expected);
        }
        if (!Files.isRegularFile(file)) {
            throw new FileSystemException(file.toString(), null, "not a regular file; expected " + expected);
        }
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, file.toString(), ndim);
        }
    }

    static Raw read(InputStream in, String source, int ndim) throws IOException {
        try {
            InputStream data = decompressed(in);
            int[] dims = header(data, source, ndim);
            return new Raw(source, dims, body(data, source, dims));
        } catch (ZipException | EOFException e) {
            throw new TensorFormatException(source, "truncated or corrupt gzip data (" + e.getMessage() + ")", e);
        }
    }

    private static InputStream decompressed(InputStream in) throws IOException {
        BufferedInputStream b = new BufferedInputStream(in, 1 << 16);
        b.mark(2);
        int b0 = b.read();
        int b1 = b.read();
        b.reset();
        return b0 == 0x1f && b1 == 0x8b ? new BufferedInputStream(new GZIPInputStream(b, 1 << 16), 1 << 16) : b;
    }

    private static int[] header(InputStream in, String source, int ndim) throws IOException {
        byte[] magic = exactly(in, 4, source, "the 4-byte magic number");
        int value = bigEndian(magic, 0);
        int expectedMagic = ndim == 3 ? IMAGES_MAGIC : LABELS_MAGIC;
        if (magic[0] != 0 || magic[1] != 0) {
            throw new TensorFormatException(source, String.format(
                    "bad magic 0x%08x, not an IDX file; expected 0x%08x (%s)", value, expectedMagic, kind(ndim)));
        }
        if (magic[2] != 0x08) {
            throw new TensorFormatException(source, String.format("IDX element type 0x%02x (magic 0x%08x) is not"
                    + " supported; expected 0x08 (unsigned byte), magic 0x%08x", magic[2], value, expectedMagic));
        }
        if (magic[3] != ndim) {
            throw new TensorFormatException(source, String.format("has %d dimensions (magic 0x%08x) but %s has %d"
                    + " (magic 0x%08x)%s", magic[3], value, kind(ndim), ndim, expectedMagic, hint(magic[3])));
        }
        return dims(exactly(in, 4 * ndim, source, "the " + ndim + " dimension sizes"), source);
    }

    private static int[] dims(byte[] bytes, String source) throws TensorFormatException {
        int[] dims = new int[bytes.length / 4];
        long total = 1;
        for (int i = 0; i < dims.length; i++) {
            long d = bigEndian(bytes, 4 * i) & 0xffffffffL;
            total *= d;
            if (d > Integer.MAX_VALUE || total > Integer.MAX_VALUE - 64) {
                throw new TensorFormatException(source, "dimensions " + Arrays.toString(dimsSoFar(bytes, i))
                        + " hold more than " + (Integer.MAX_VALUE - 64) + " bytes, which tensorbus does not read");
            }
            dims[i] = (int) d;
        }
        return dims;
    }

    private static long[] dimsSoFar(byte[] bytes, int last) {
        long[] out = new long[last + 1];
        for (int i = 0; i <= last; i++) {
            out[i] = bigEndian(bytes, 4 * i) & 0xffffffffL;
        }
        return out;
    }

    private static byte[] body(InputStream in, String source, int[] dims) throws IOException {
        int n = 1;
        for (int d : dims) {
            n *= d;
        }
        byte[] data = in.readNBytes(n);
        if (data.length < n) {
            throw new TensorFormatException(source, "truncated: the header promises " + shape(dims) + " = " + n
                    + " bytes of data but only " + data.length + " follow");
        }
        if (in.read() != -1) {
            throw new TensorFormatException(source, "has bytes after the " + n + " bytes of data that the header "
                    + shape(dims) + " promises; the header and the data disagree");
        }
        return data;
    }

    private static byte[] exactly(InputStream in, int n, String source, String what) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length < n) {
            throw new TensorFormatException(source, "truncated: the file ends after " + b.length + " of the " + n
                    + " bytes of " + what + " of the IDX header");
        }
        return b;
    }

    private static int bigEndian(byte[] b, int at) {
        return (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | (b[at + 3] & 0xff);
    }

    private static String kind(int ndim) {
        return ndim == 3 ? "an images file" : "a labels file";
    }

    private static String hint(int found) {
        return found == 1 ? "; this looks like a labels file" : found == 3 ? "; this looks like an images file" : "";
    }

    private static String shape(int[] dims) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < dims.length; i++) {
            s.append(i == 0 ? "" : " x ").append(dims[i]);
        }
        return s.toString();
    }

    /** Checks that an images file and a labels file hold the same number of items. */
    static void requireSameCount(Raw images, Raw labels) throws TensorFormatException {
        if (images.count() != labels.count()) {
            throw new TensorFormatException(images.source(), "holds " + images.count() + " images but the labels file "
                    + labels.source() + " holds " + labels.count() + " labels; the two files must belong together");
        }
    }

    /** Float32 values {@code ((b / 255) - mean) / std} for each byte value, computed in float32 as PyTorch. */
    static float[] table(double mean, double std) {
        float[] t = new float[256];
        for (int b = 0; b < 256; b++) {
            float x = (float) b / 255f;
            t[b] = (x - (float) mean) / (float) std;
        }
        return t;
    }

    /** The bytes of {@code raw} mapped through {@code table}, as a float32 tensor of {@code shape}. */
    static Tensor floats(Raw raw, float[] table, int... shape) {
        Tensor t = Tensor.empty(DType.FLOAT32, shape);
        MemorySegment s = t.dataSegment();
        byte[] data = raw.data();
        for (int i = 0; i < data.length; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, table[data[i] & 0xff]);
        }
        return t;
    }

    /** The bytes of a labels file as int64. */
    static Tensor labels(Raw raw) {
        long[] values = new long[raw.data().length];
        for (int i = 0; i < values.length; i++) {
            values[i] = raw.data()[i] & 0xff;
        }
        return Tensor.of(values, values.length);
    }
}
