package io.tensorbus.io;

import io.tensorbus.DType;
import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.io.impl.ByteInput;
import io.tensorbus.io.impl.Dims;
import io.tensorbus.io.impl.Layouts;
import io.tensorbus.io.impl.NpyHeader;
import io.tensorbus.io.impl.Output;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * NumPy's {@code .npy} format ({@code numpy.save} / {@code numpy.load}), so that single arrays move between
 * NumPy or PyTorch ({@code torch.from_numpy}) and tensorbus.
 *
 * <p>Reading accepts format versions 1.0, 2.0 and 3.0; the descrs {@code <f2 <f4 <f8 <i4 <i8 |b1} in little-
 * or big-endian order (big-endian data is byte-swapped); {@code |i1 |u1 <i2 <u2} widened to int32 and
 * {@code <u4} widened to int64, since tensorbus has no smaller integer types; Fortran-order data (reordered
 * into C order); 0-d arrays (shape {@code ()}) and empty arrays. Object arrays are never read (no pickle).
 *
 * <p>Writing produces exactly the bytes {@code numpy.save} produces for a C-order array: version 1.0 (2.0
 * when the header would exceed 65535 bytes), little-endian, header padded so that data starts at a multiple
 * of 64 bytes. Every dtype but bfloat16 (which NumPy lacks) can be written.
 */
public final class Npy {
    private Npy() {
    }

    /**
     * Reads a {@code .npy} file.
     *
     * @return a new contiguous tensor that owns its memory
     * @throws TensorFormatException naming the file when it is malformed, truncated, has bytes after the
     *     data, or uses an unsupported dtype
     * @throws IOException when the file cannot be read
     */
    public static Tensor read(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return read(ByteInput.of(ch, file.toString(), ch.size()), true);
        }
    }

    /**
     * Reads a {@code .npy} image held in memory (all of {@code bytes} must be one array).
     *
     * @throws TensorFormatException when the bytes are malformed, truncated or have bytes after the data
     */
    public static Tensor read(byte[] bytes) throws TensorFormatException {
        try {
            return read(ByteInput.of(bytes, "<npy bytes>"), true);
        } catch (TensorFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new IllegalStateException("reading a byte array cannot fail with I/O", e);
        }
    }

    /**
     * Reads one array from a blocking channel and leaves the channel just after it, so that arrays written
     * one after another (several {@code numpy.save} calls on one file object) are read one call each.
     *
     * @throws TensorFormatException when the array is malformed or the channel ends inside it
     * @throws IOException when the channel fails
     */
    public static Tensor read(ReadableByteChannel channel) throws IOException {
        return read(ByteInput.of(channel, "<npy channel>", -1), false);
    }

    /**
     * Reads one array from a stream and leaves the stream just after it (see
     * {@link #read(ReadableByteChannel)}); the stream is not closed.
     *
     * @throws TensorFormatException when the array is malformed or the stream ends inside it
     * @throws IOException when the stream fails
     */
    public static Tensor read(InputStream in) throws IOException {
        return read(ByteInput.of(Channels.newChannel(in), "<npy stream>", -1), false);
    }

    /** Reads one array; with {@code whole}, the input must end right after the data. */
    static Tensor read(ByteInput in, boolean whole) throws IOException {
        NpyHeader h = NpyHeader.read(in);
        int[] shape = h.shape();
        long numel = Dims.numel(shape);
        boolean fortran = h.fortranOrder() && shape.length > 1;
        in.require(numel * h.type().itemSize(), "data for shape " + Dims.str(shape) + " of " + h.type().name());
        Tensor t = h.type().read(in, fortran ? reversed(shape) : shape, numel);
        if (whole && in.remaining() > 0) {
            throw new TensorFormatException(in.name(), in.remaining() + " unexpected bytes after the data (shape "
                    + Dims.str(shape) + " of " + h.type().name() + " needs " + numel * h.type().itemSize()
                    + " bytes); to read arrays saved one after another, use Npy.read(InputStream)");
        }
        return fortran ? Layouts.fortranToC(t, shape) : t;
    }

    private static int[] reversed(int[] shape) {
        int[] r = new int[shape.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = shape[shape.length - 1 - i];
        }
        return r;
    }

    /**
     * Writes a tensor as a {@code .npy} file, replacing the file only once it is complete.
     *
     * @param tensor any tensor (a non-contiguous one is written in its logical row-major order)
     * @throws IllegalArgumentException for bfloat16, which NumPy has no type for
     * @throws IOException when the file cannot be written
     */
    public static void write(Path file, Tensor tensor) throws IOException {
        Tensor c = prepare(tensor);
        Output.atomically(file, out -> writeTo(out, c));
    }

    /**
     * Writes a tensor in {@code .npy} format to a stream (not closed), as {@code numpy.save(f, a)} does.
     *
     * @throws IllegalArgumentException for bfloat16
     * @throws IOException when the stream fails
     */
    public static void write(OutputStream out, Tensor tensor) throws IOException {
        Tensor c = prepare(tensor);
        writeTo(Channels.newChannel(out), c);
    }

    /**
     * The {@code .npy} image of a tensor, byte for byte what {@code numpy.save} writes for the same array.
     *
     * @throws IllegalArgumentException for bfloat16, or a tensor larger than a byte array can hold
     */
    public static byte[] toBytes(Tensor tensor) {
        Tensor c = prepare(tensor);
        long size = header(c).length + TensorBytes.of(c).byteSize();
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a .npy image of " + size + " bytes does not fit in a byte array;"
                    + " use Npy.write(Path, Tensor)");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) size);
        try {
            writeTo(Channels.newChannel(bytes), c);
        } catch (IOException e) {
            throw new IllegalStateException("writing to memory cannot fail with I/O", e);
        }
        return bytes.toByteArray();
    }

    /** The header bytes of a contiguous tensor. */
    static byte[] header(Tensor contiguous) {
        return NpyHeader.encode(contiguous.dtype().numpyDescr(), contiguous.shape());
    }

    /** Writes the header and data of a contiguous tensor. */
    static void writeTo(WritableByteChannel out, Tensor contiguous) throws IOException {
        Output.writeFully(out, header(contiguous));
        Output.writeFully(out, TensorBytes.of(contiguous));
    }

    /** Checks that a tensor can be written and returns it contiguous. */
    static Tensor prepare(Tensor tensor) {
        Objects.requireNonNull(tensor, "tensor");
        if (tensor.dtype() == DType.BFLOAT16) {
            throw new IllegalArgumentException("bfloat16 has no NumPy dtype; convert first (t.to(DType.FLOAT32))"
                    + " or save it with SafeTensors");
        }
        return TensorBytes.contiguous(tensor);
    }
}
