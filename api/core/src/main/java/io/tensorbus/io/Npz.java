package io.tensorbus.io;

import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.io.impl.ByteInput;
import io.tensorbus.io.impl.Output;
import io.tensorbus.tensor.Tensor;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.channels.Channels;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * NumPy's {@code .npz} format ({@code numpy.savez}, {@code numpy.savez_compressed}, {@code numpy.load}): a zip
 * archive with one {@code <name>.npy} entry per array. Used for whole state dicts.
 *
 * <p>Reading accepts stored and deflated entries and every {@code .npy} feature {@link Npy} reads. Writing
 * stores entries uncompressed, as {@code numpy.savez} does ({@link #writeCompressed} deflates them).
 */
public final class Npz {
    private static final String SUFFIX = ".npy";

    private Npz() {
    }

    /**
     * Reads every array of an {@code .npz} file.
     *
     * @return the arrays by name (the entry name without {@code .npy}), in archive order
     * @throws TensorFormatException naming the file and entry when the file is not a zip archive, an entry
     *     is not a {@code .npy} array, two entries share a name, or an array is malformed
     * @throws IOException when the file cannot be read
     */
    public static Map<String, Tensor> read(Path file) throws IOException {
        try (ZipFile zip = new ZipFile(file.toFile())) {
            Map<String, Tensor> out = new LinkedHashMap<>();
            for (ZipEntry e : Collections.list(zip.entries())) {
                String name = arrayName(e, file);
                if (out.containsKey(name)) {
                    throw new TensorFormatException(file.toString(), "two entries are named '" + e.getName()
                            + "'; names in an .npz archive must be unique");
                }
                out.put(name, readEntry(zip, e, file));
            }
            return out;
        } catch (ZipException | EOFException e) {
            throw new TensorFormatException(file.toString(), "not a valid zip archive (an .npz file is a zip of"
                    + " .npy files): " + e.getMessage(), e);
        }
    }

    private static String arrayName(ZipEntry e, Path file) throws TensorFormatException {
        String n = e.getName();
        if (e.isDirectory() || !n.endsWith(SUFFIX)) {
            throw new TensorFormatException(file.toString(), "entry '" + n + "' is not a .npy array; an .npz"
                    + " archive holds only <name>.npy entries");
        }
        return n.substring(0, n.length() - SUFFIX.length());
    }

    private static Tensor readEntry(ZipFile zip, ZipEntry e, Path file) throws IOException {
        String source = file + " entry " + e.getName();
        try (InputStream in = zip.getInputStream(e)) {
            Tensor t = Npy.read(ByteInput.of(Channels.newChannel(in), source, e.getSize()), true);
            if (in.read() >= 0) {
                throw new TensorFormatException(source, "the entry holds more bytes than its declared size "
                        + e.getSize());
            }
            return t;
        }
    }

    /**
     * Writes arrays as an uncompressed {@code .npz} file, as {@code numpy.savez(file, **arrays)} does,
     * replacing the file only once it is complete.
     *
     * @param arrays arrays by name (a name becomes the entry {@code <name>.npy}); written in map order
     * @throws IllegalArgumentException for an empty or null name, or a bfloat16 tensor (NumPy lacks it)
     * @throws IOException when the file cannot be written
     */
    public static void write(Path file, Map<String, Tensor> arrays) throws IOException {
        write(file, arrays, false);
    }

    /**
     * Writes arrays as a deflate-compressed {@code .npz} file, as {@code numpy.savez_compressed} does.
     *
     * @throws IllegalArgumentException as {@link #write(Path, Map)}
     * @throws IOException when the file cannot be written
     */
    public static void writeCompressed(Path file, Map<String, Tensor> arrays) throws IOException {
        write(file, arrays, true);
    }

    private static void write(Path file, Map<String, Tensor> arrays, boolean compressed) throws IOException {
        Map<String, Tensor> prepared = prepare(arrays);
        Output.atomically(file, ch -> {
            ZipOutputStream zip = new ZipOutputStream(new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16));
            for (Map.Entry<String, Tensor> e : prepared.entrySet()) {
                writeEntry(zip, e.getKey() + SUFFIX, e.getValue(), compressed);
            }
            zip.finish();
            zip.flush();
        });
    }

    private static Map<String, Tensor> prepare(Map<String, Tensor> arrays) {
        Objects.requireNonNull(arrays, "arrays");
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : arrays.entrySet()) {
            if (e.getKey() == null || e.getKey().isEmpty()) {
                throw new IllegalArgumentException("array names must be non-empty, got '" + e.getKey() + "'");
            }
            out.put(e.getKey(), Npy.prepare(e.getValue()));
        }
        return out;
    }

    private static void writeEntry(ZipOutputStream zip, String name, Tensor t, boolean compressed) throws IOException {
        byte[] header = Npy.header(t);
        ZipEntry entry = new ZipEntry(name);
        if (!compressed) {
            long size = header.length + TensorBytes.of(t).byteSize();
            entry.setMethod(ZipEntry.STORED);
            entry.setSize(size);
            entry.setCompressedSize(size);
            entry.setCrc(crc(header, TensorBytes.of(t)));
        } else {
            entry.setMethod(ZipEntry.DEFLATED);
        }
        zip.putNextEntry(entry);
        Npy.writeTo(Channels.newChannel(zip), t);
        zip.closeEntry();
    }

    private static long crc(byte[] header, MemorySegment data) {
        CRC32 crc = new CRC32();
        crc.update(header);
        for (long at = 0; at < data.byteSize(); at += 1 << 30) {
            crc.update(data.asSlice(at, Math.min(1 << 30, data.byteSize() - at)).asByteBuffer());
        }
        return crc.getValue();
    }
}
