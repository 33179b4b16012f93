package io.tensorbus.io.impl;

import io.tensorbus.DType;
import io.tensorbus.internal.io.Json;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header of a safetensors file: an 8-byte little-endian length N, then N bytes of UTF-8 JSON
 * {@code {"__metadata__": {str: str}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...}},
 * then the data buffer that the offsets index. Parsing validates everything the reference (Rust) library
 * validates, and more: sizes, JSON, dtypes, shapes, that the offsets tile the buffer exactly, duplicates.
 *
 * @param metadata the {@code __metadata__} map, or null when the file has none
 * @param entries the tensors, sorted by data offset (file order)
 * @param dataSize the size of the data buffer in bytes
 */
public record SafeTensorsHeader(Map<String, String> metadata, List<Entry> entries, long dataSize) {
    /** The largest header the reference library reads, in bytes. */
    public static final long MAX_HEADER = 100_000_000L;
    /** The dtypes tensorbus reads, for messages. */
    public static final String SUPPORTED = "F32, F64, F16, BF16, I32, I64, BOOL, and I8, U8, I16, U16 (read as"
            + " int32), U32 (read as int64)";
    private static final String METADATA = "__metadata__";
    private static final Set<String> INFO_KEYS = Set.of("dtype", "shape", "data_offsets");
    /** The reference library's dtype order (increasing alignment), used to order tensors on write. */
    private static final List<String> RUST_DTYPE_ORDER = List.of("BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16",
            "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64");

    /**
     * One tensor of the file.
     *
     * @param name the tensor name
     * @param type how its elements are stored
     * @param shape its shape
     * @param begin first byte in the data buffer
     * @param end one past the last byte in the data buffer
     */
    public record Entry(String name, ElementType type, int[] shape, long begin, long end) {
        /** The number of elements. */
        public long numel() {
            return Dims.numel(shape);
        }
    }

    /**
     * Reads the length and header from {@code in}, leaving it at the start of the data buffer.
     *
     * @throws TensorFormatException when the length is too large or beyond the input, the header is not
     *     UTF-8 JSON of the right structure, or the offsets do not tile the rest of the input exactly
     */
    public static SafeTensorsHeader read(ByteInput in) throws IOException {
        byte[] len = in.readBytes(8, "the 8-byte header length");
        long n = ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (Long.compareUnsigned(n, MAX_HEADER) > 0) {
            throw new TensorFormatException(in.name(), "header length " + Long.toUnsignedString(n)
                    + " exceeds the limit of " + MAX_HEADER + " bytes");
        }
        long left = in.remaining();
        if (left >= 0 && n > left) {
            throw new TensorFormatException(in.name(), "header length " + n + " exceeds the " + left
                    + " bytes that follow the length field");
        }
        SafeTensorsHeader h = parse(in.readBytes((int) n, "header"), in.name());
        h.checkDataSize(in.remaining(), in.name());
        return h;
    }

    /**
     * Checks that the offsets cover a data buffer of {@code size} bytes exactly.
     *
     * @param size the buffer size, or -1 when unknown (nothing is checked)
     * @throws TensorFormatException naming the first tensor that lies beyond the buffer, or the size of
     *     the bytes that no tensor covers
     */
    public void checkDataSize(long size, String source) throws TensorFormatException {
        for (Entry e : entries) {
            if (size >= 0 && e.end > size) {
                throw new TensorFormatException(source, "tensor \"" + e.name + "\": data_offsets [" + e.begin
                        + ", " + e.end + "] are out of range: the data buffer after the header holds " + size
                        + " bytes");
            }
        }
        if (size >= 0 && size != dataSize) {
            throw new TensorFormatException(source, "the data buffer after the header holds " + size
                    + " bytes but the tensors' data_offsets cover only " + dataSize + "; the offsets must cover"
                    + " the buffer exactly");
        }
    }

    /**
     * Parses and validates the JSON header bytes (without the length field).
     *
     * @throws TensorFormatException as {@link #read(ByteInput)}
     */
    public static SafeTensorsHeader parse(byte[] json, String source) throws TensorFormatException {
        Object root = Json.parse(utf8(json, source), source);
        if (!(root instanceof Map<?, ?> map)) {
            throw new TensorFormatException(source, "the header must be a JSON object of tensor name to"
                    + " {dtype, shape, data_offsets}, got " + kind(root));
        }
        Map<String, String> metadata = null;
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String key = (String) e.getKey();
            if (key.equals(METADATA)) {
                metadata = metadata(e.getValue(), source);
            } else {
                entries.add(entry(key, e.getValue(), source));
            }
        }
        entries.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        return new SafeTensorsHeader(metadata, List.copyOf(entries), checkTiling(entries, source));
    }

    private static String utf8(byte[] json, String source) throws TensorFormatException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(json)).toString();
        } catch (CharacterCodingException e) {
            throw new TensorFormatException(source, "the header is not valid UTF-8", e);
        }
    }

    private static Map<String, String> metadata(Object value, String source) throws TensorFormatException {
        if (!(value instanceof Map<?, ?> m)) {
            throw new TensorFormatException(source, "__metadata__ must be an object of string to string, got "
                    + kind(value));
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getValue() instanceof String s)) {
                throw new TensorFormatException(source, "__metadata__ value of \"" + e.getKey() + "\" must be a"
                        + " string, got " + kind(e.getValue()));
            }
            out.put((String) e.getKey(), s);
        }
        return out;
    }

    private static Entry entry(String name, Object value, String source) throws TensorFormatException {
        String where = "tensor \"" + name + "\": ";
        if (!(value instanceof Map<?, ?> info) || !info.keySet().equals(INFO_KEYS)) {
            throw new TensorFormatException(source, where + "expected an object with exactly the members dtype,"
                    + " shape and data_offsets, got " + (value instanceof Map<?, ?> m ? m.keySet() : kind(value)));
        }
        ElementType type = elementType(info.get("dtype"), source, where);
        int[] shape = Dims.shape(longs(info.get("shape"), -1, source, where + "shape"), source);
        List<Long> offsets = longs(info.get("data_offsets"), 2, source, where + "data_offsets");
        Entry entry = new Entry(name, type, shape, offsets.get(0), offsets.get(1));
        checkSize(entry, source, where);
        return entry;
    }

    private static void checkSize(Entry e, String source, String where) throws TensorFormatException {
        if (e.end < e.begin) {
            throw new TensorFormatException(source, where + "data_offsets [" + e.begin + ", " + e.end + "] end"
                    + " before they begin");
        }
        long need = e.numel() * e.type.itemSize();
        if (e.end - e.begin != need) {
            throw new TensorFormatException(source, where + "shape " + Dims.str(e.shape) + " of " + e.type.name()
                    + " needs " + need + " bytes but data_offsets [" + e.begin + ", " + e.end + "] span "
                    + (e.end - e.begin));
        }
    }

    /** Checks that the sorted entries tile {@code [0, end)} without gaps or overlaps; returns the end. */
    private static long checkTiling(List<Entry> sorted, String source) throws TensorFormatException {
        long at = 0;
        for (Entry e : sorted) {
            if (e.begin != at) {
                throw new TensorFormatException(source, "tensor \"" + e.name + "\": data_offsets [" + e.begin
                        + ", " + e.end + "] " + (e.begin < at ? "overlap the previous tensor" : "leave a gap")
                        + " (expected to begin at " + at + "); tensors must tile the data buffer exactly");
            }
            at = e.end;
        }
        return at;
    }

    private static ElementType elementType(Object dtype, String source, String where) throws TensorFormatException {
        ElementType t = dtype instanceof String s ? lookup(s) : null;
        if (t == null) {
            throw new TensorFormatException(source, where + "unsupported dtype " + (dtype instanceof String
                    ? "'" + dtype + "'" : kind(dtype)) + "; supported: " + SUPPORTED);
        }
        return t;
    }

    private static ElementType lookup(String name) {
        return switch (name) {
            case "F32", "F64", "F16", "BF16", "I32", "I64",
                    "BOOL" -> ElementType.exact(name, DType.fromSafetensors(name));
            case "I8" -> new ElementType(name, DType.INT32, 1, true, ByteOrder.LITTLE_ENDIAN);
            case "U8" -> new ElementType(name, DType.INT32, 1, false, ByteOrder.LITTLE_ENDIAN);
            case "I16" -> new ElementType(name, DType.INT32, 2, true, ByteOrder.LITTLE_ENDIAN);
            case "U16" -> new ElementType(name, DType.INT32, 2, false, ByteOrder.LITTLE_ENDIAN);
            case "U32" -> new ElementType(name, DType.INT64, 4, false, ByteOrder.LITTLE_ENDIAN);
            default -> null;
        };
    }

    /** A JSON array of non-negative integers (of a given length, unless {@code length} is -1). */
    private static List<Long> longs(Object value, int length, String source, String what) throws TensorFormatException {
        if (!(value instanceof List<?> list) || (length >= 0 && list.size() != length)) {
            throw new TensorFormatException(source, what + " must be an array of " + (length >= 0 ? length + " " : "")
                    + "non-negative integers, got " + kind(value));
        }
        List<Long> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof Long l) || l < 0) {
                throw new TensorFormatException(source, what + " must hold non-negative integers below 2^63, got "
                        + (o instanceof BigInteger || o instanceof Long ? o : kind(o)));
            }
            out.add(l);
        }
        return out;
    }

    private static String kind(Object v) {
        return switch (v) {
            case null -> "null";
            case Map<?, ?> ignored -> "an object";
            case List<?> l -> "an array " + abbreviate(Json.write(l));
            case String s -> "the string \"" + abbreviate(s) + "\"";
            default -> abbreviate(v.toString());
        };
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    // ---------------------------------------------------------------- writing

    /**
     * The length field and JSON header for contiguous tensors, and their order in the data buffer: by
     * decreasing dtype alignment, then by name, as the reference library writes them, so that every tensor
     * starts aligned to its element size. The header is padded with spaces to a multiple of 8 bytes.
     *
     * @param tensors contiguous tensors by name
     * @param metadata the {@code __metadata__} map, or null to leave it out
     * @param order receives the names in data order
     */
    public static byte[] encode(Map<String, Tensor> tensors, Map<String, String> metadata, List<String> order) {
        List<String> names = new ArrayList<>(tensors.keySet());
        names.sort(Comparator.<String>comparingInt(n -> -RUST_DTYPE_ORDER.indexOf(tensors.get(n).dtype()
                .safetensorsName())).thenComparing(SafeTensorsHeader::compareCodePoints));
        Map<String, Object> json = new LinkedHashMap<>();
        if (metadata != null) {
            json.put(METADATA, metadata);
        }
        long offset = 0;
        for (String name : names) {
            Tensor t = tensors.get(name);
            long size = (long) t.numel() * t.dtype().byteSize();
            json.put(name, info(t, offset, offset + size));
            offset += size;
        }
        order.addAll(names);
        return withLength(Json.write(json).getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, Object> info(Tensor t, long begin, long end) {
        List<Long> shape = new ArrayList<>();
        for (int d : t.shape()) {
            shape.add((long) d);
        }
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("dtype", t.dtype().safetensorsName());
        info.put("shape", shape);
        info.put("data_offsets", List.of(begin, end));
        return info;
    }

    private static byte[] withLength(byte[] json) {
        int padded = (json.length + 7) / 8 * 8;
        ByteBuffer out = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(padded).put(json);
        while (out.hasRemaining()) {
            out.put((byte) ' ');
        }
        return out.array();
    }

    /** Orders strings by code point, which is the byte order of their UTF-8 forms (Rust's String order). */
    private static int compareCodePoints(String a, String b) {
        return Arrays.compare(a.codePoints().toArray(), b.codePoints().toArray());
    }
}
