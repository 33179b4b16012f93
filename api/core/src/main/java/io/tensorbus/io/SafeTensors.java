package io.tensorbus.io;

import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.io.impl.ByteInput;
import io.tensorbus.io.impl.Output;
import io.tensorbus.io.impl.SafeTensorsHeader.Entry;
import io.tensorbus.io.impl.SafeTensorsHeader;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The safetensors format of Hugging Face ({@code safetensors.torch.save_file} / {@code load_file}): an
 * 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and byte range, and
 * the raw little-endian C-order data. It holds no code, so loading an untrusted file is safe.
 *
 * <p>Reading validates the whole header before allocating anything: header length (at most 100 MB and
 * within the file), UTF-8 and strict JSON without duplicate names, known dtypes (F32, F64, F16, BF16, I32,
 * I64, BOOL; I8, U8, I16, U16 widened to int32 and U32 to int64), shapes, and that the data offsets tile
 * the data buffer exactly. Writing produces the bytes the reference library writes: tensors ordered by
 * decreasing dtype alignment then name, header padded with spaces to a multiple of 8 bytes.
 */
public final class SafeTensors {
    private SafeTensors() {
    }

    /**
     * Loads every tensor of a file into memory that tensorbus owns (writable, independent of the file).
     *
     * @return tensors by name, in the order of their data in the file
     * @throws TensorFormatException naming the file and the problem when the file is malformed
     * @throws IOException when the file cannot be read
     */
    public static Map<String, Tensor> load(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return load(ByteInput.of(ch, file.toString(), ch.size()));
        }
    }

    /**
     * Loads every tensor of a safetensors image held in memory (copied; the array may be reused after).
     *
     * @throws TensorFormatException when the bytes are malformed
     */
    public static Map<String, Tensor> load(byte[] bytes) throws TensorFormatException {
        try {
            return load(ByteInput.of(bytes, "<safetensors bytes>"));
        } catch (TensorFormatException e) {
            throw e;
        } catch (IOException e) {
            throw new IllegalStateException("reading a byte array cannot fail with I/O", e);
        }
    }

    private static Map<String, Tensor> load(ByteInput in) throws IOException {
        SafeTensorsHeader h = SafeTensorsHeader.read(in);
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Entry e : h.entries()) {
            out.put(e.name(), e.type().read(in, e.shape(), e.numel()));
        }
        return out;
    }

    /**
     * Loads a file without copying: tensors are read-only views of the file mapped into memory, for large
     * checkpoints that are only read (inference, or copying into parameters). The mapping lives as long as
     * any of the tensors is reachable. A tensor whose bytes are not aligned to its element size in the file,
     * or that is widened (I8, U8, I16, U16, U32), is copied instead. Writing to a mapped tensor fails;
     * changing or truncating the file while its tensors are in use is undefined, as for any mapped file.
     *
     * @return tensors by name, in the order of their data in the file
     * @throws TensorFormatException naming the file and the problem when the file is malformed
     * @throws IOException when the file cannot be read or mapped
     */
    public static Map<String, Tensor> loadMapped(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteInput in = ByteInput.of(ch, file.toString(), ch.size());
            SafeTensorsHeader h = SafeTensorsHeader.read(in);
            MemorySegment data = ch.map(FileChannel.MapMode.READ_ONLY, in.position(), h.dataSize(), Arena.ofAuto());
            Map<String, Tensor> out = new LinkedHashMap<>();
            for (Entry e : h.entries()) {
                out.put(e.name(), view(data.asSlice(e.begin(), e.end() - e.begin()), e));
            }
            return out;
        }
    }

    private static Tensor view(MemorySegment bytes, Entry e) {
        boolean aligned = bytes.address() % e.type().itemSize() == 0;
        if (e.type().isExact() && aligned) {
            return Tensor.fromSegment(bytes, e.type().target(), e.shape());
        }
        return e.type().decode(bytes, e.shape(), e.numel());
    }

    /**
     * Reads only the {@code __metadata__} map of a file (the header is validated, the data is not read).
     *
     * @return the metadata in file order; empty when the file has none
     * @throws TensorFormatException when the header is malformed or does not match the file size
     * @throws IOException when the file cannot be read
     */
    public static Map<String, String> metadata(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            Map<String, String> m = SafeTensorsHeader.read(ByteInput.of(ch, file.toString(), ch.size())).metadata();
            return m == null ? Map.of() : Collections.unmodifiableMap(m);
        }
    }

    /**
     * Saves tensors without metadata; see {@link #save(Path, Map, Map)}.
     *
     * @throws IOException when the file cannot be written
     */
    public static void save(Path file, Map<String, Tensor> tensors) throws IOException {
        save(file, tensors, null);
    }

    /**
     * Saves tensors as a safetensors file, replacing the file only once it is complete.
     *
     * @param tensors tensors by name; any dtype and layout (non-contiguous ones are written row-major)
     * @param metadata free-form string pairs stored as {@code __metadata__} (such as
     *     {@code format=pt}), or null to store none
     * @throws IllegalArgumentException for a null or {@code __metadata__} name, a null tensor, or null
     *     metadata keys or values
     * @throws IOException when the file cannot be written
     */
    public static void save(Path file, Map<String, Tensor> tensors, Map<String, String> metadata) throws IOException {
        Map<String, Tensor> prepared = prepare(tensors, metadata);
        List<String> order = new ArrayList<>();
        byte[] header = SafeTensorsHeader.encode(prepared, metadata, order);
        Output.atomically(file, out -> writeTo(out, header, prepared, order));
    }

    /**
     * The safetensors image of tensors, as {@code safetensors.torch.save(tensors, metadata)} returns it.
     *
     * @throws IllegalArgumentException as {@link #save(Path, Map, Map)}, or when the image exceeds the
     *     size of a byte array
     */
    public static byte[] toBytes(Map<String, Tensor> tensors, Map<String, String> metadata) {
        Map<String, Tensor> prepared = prepare(tensors, metadata);
        List<String> order = new ArrayList<>();
        byte[] header = SafeTensorsHeader.encode(prepared, metadata, order);
        long size = header.length;
        for (Tensor t : prepared.values()) {
            size += TensorBytes.of(t).byteSize();
        }
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a safetensors image of " + size + " bytes does not fit in a byte"
                    + " array; use SafeTensors.save(Path, ...)");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) size);
        try {
            writeTo(Channels.newChannel(bytes), header, prepared, order);
        } catch (IOException e) {
            throw new IllegalStateException("writing to memory cannot fail with I/O", e);
        }
        return bytes.toByteArray();
    }

    private static void writeTo(WritableByteChannel out, byte[] header, Map<String, Tensor> tensors,
            List<String> order) throws IOException {
        Output.writeFully(out, header);
        for (String name : order) {
            Output.writeFully(out, TensorBytes.of(tensors.get(name)));
        }
    }

    private static Map<String, Tensor> prepare(Map<String, Tensor> tensors, Map<String, String> metadata) {
        Objects.requireNonNull(tensors, "tensors");
        if (metadata != null) {
            metadata.forEach((k, v) -> {
                if (k == null || v == null) {
                    throw new IllegalArgumentException("metadata keys and values must not be null: " + k + "=" + v);
                }
            });
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        tensors.forEach((name, t) -> {
            if (name == null || name.equals("__metadata__")) {
                throw new IllegalArgumentException("tensor name " + name + " is not allowed; '__metadata__' is"
                        + " reserved for the metadata map");
            }
            if (t == null) {
                throw new IllegalArgumentException("tensor '" + name + "' is null");
            }
            out.put(name, TensorBytes.contiguous(t));
        });
        return out;
    }
}
