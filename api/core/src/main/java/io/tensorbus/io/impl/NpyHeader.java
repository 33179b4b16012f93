package io.tensorbus.io.impl;

import io.tensorbus.DType;
import io.tensorbus.io.TensorFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header of a {@code .npy} file: magic {@code \x93NUMPY}, a version byte pair, a little-endian header
 * length (2 bytes in version 1.0, 4 bytes in 2.0 and 3.0), and a Python dict literal such as
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }} padded with spaces and a newline.
 *
 * @param type how the elements are stored and which dtype they are read as
 * @param fortranOrder whether the data is column-major
 * @param shape the array shape ({@code []} for a 0-d array)
 */
public record NpyHeader(ElementType type, boolean fortranOrder, int[] shape) {
    /** The six magic bytes that start every {@code .npy} file. */
    static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    /** NumPy aligns the data start to this many bytes. */
    static final int ALIGN = 64;
    /** Largest header tensorbus reads; NumPy itself refuses more than 10000 bytes by default. */
    static final int MAX_HEADER = 1 << 20;
    /** NumPy leaves room for this many digits in the growth axis (numpy.lib.format). */
    private static final int GROWTH_AXIS_MAX_DIGITS = 21;
    private static final Set<String> KEYS = Set.of("descr", "fortran_order", "shape");

    /** The descrs tensorbus reads, for messages. */
    public static final String SUPPORTED = "<f2, <f4, <f8, <i4, <i8, |b1 (also big-endian '>' and native '='),"
            + " and |i1, |u1, <i2, <u2 (read as int32), <u4 (read as int64)";

    /**
     * Reads and parses the header, leaving the input at the first data byte.
     *
     * @throws TensorFormatException for a bad magic, version, length or dict, or an unsupported descr
     */
    public static NpyHeader read(ByteInput in) throws IOException {
        byte[] start = in.readBytes(8, ".npy magic and version");
        if (!Arrays.equals(start, 0, 6, MAGIC, 0, 6)) {
            throw new TensorFormatException(in.name(), "not a .npy file: bad magic "
                    + HexFormat.ofDelimiter(" ").formatHex(start, 0, 6) + "; a .npy file starts with 93 4e 55 4d 50 59"
                    + " (\\x93NUMPY)");
        }
        int major = start[6] & 0xff;
        int minor = start[7] & 0xff;
        if (minor != 0 || major < 1 || major > 3) {
            throw new TensorFormatException(in.name(), "unsupported .npy version " + major + "." + minor
                    + "; supported: 1.0, 2.0, 3.0");
        }
        String text = headerText(in, major);
        return parse(text, in.name());
    }

    private static String headerText(ByteInput in, int major) throws IOException {
        byte[] len = in.readBytes(major == 1 ? 2 : 4, ".npy header length");
        ByteBuffer bb = ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN);
        long n = major == 1 ? bb.getShort() & 0xffff : bb.getInt() & 0xffffffffL;
        if (n > MAX_HEADER) {
            throw new TensorFormatException(in.name(), ".npy header length " + n + " exceeds the limit of "
                    + MAX_HEADER + " bytes");
        }
        byte[] raw = in.readBytes((int) n, ".npy header");
        if (major < 3) {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new TensorFormatException(in.name(), ".npy version 3.0 header is not valid UTF-8", e);
        }
    }

    /**
     * Parses the header dict text.
     *
     * @throws TensorFormatException when it is not a dict with exactly the keys descr (a supported type
     *     string), fortran_order (True or False) and shape (a tuple of non-negative ints)
     */
    public static NpyHeader parse(String text, String source) throws TensorFormatException {
        Map<String, Object> dict = new PyLiteral(text, source).dict();
        if (!dict.keySet().equals(KEYS)) {
            throw new TensorFormatException(source, "bad .npy header dict: keys " + dict.keySet()
                    + "; a .npy header has exactly 'descr', 'fortran_order' and 'shape'");
        }
        if (!(dict.get("descr") instanceof String descr)) {
            throw new TensorFormatException(source, "bad .npy header dict: 'descr' is " + dict.get("descr")
                    + "; structured dtypes are not supported, only a type string (" + SUPPORTED + ")");
        }
        if (!(dict.get("fortran_order") instanceof Boolean fortran)) {
            throw new TensorFormatException(source, "bad .npy header dict: 'fortran_order' must be True or False,"
                    + " got " + dict.get("fortran_order"));
        }
        return new NpyHeader(elementType(descr, source), fortran, shape(dict.get("shape"), source));
    }

    @SuppressWarnings("unchecked")
    private static int[] shape(Object value, String source) throws TensorFormatException {
        if (!(value instanceof PyLiteral.Tuple(List<?> items))) {
            throw new TensorFormatException(source, "bad .npy header dict: 'shape' must be a tuple of ints"
                    + " such as (3, 4), (3,) or (), got " + value);
        }
        for (Object o : items) {
            if (!(o instanceof Long)) {
                throw new TensorFormatException(source, "bad .npy header dict: 'shape' must hold ints, got " + o);
            }
        }
        return Dims.shape((List<Long>) items, source);
    }

    /**
     * Maps a NumPy descr to how it is read.
     *
     * @throws TensorFormatException naming the supported descrs when {@code descr} is not one of them
     */
    public static ElementType elementType(String descr, String source) throws TensorFormatException {
        ElementType t = descr.length() >= 3 ? lookup(descr) : null;
        if (t == null) {
            throw new TensorFormatException(source, "unsupported descr '" + descr + "'; supported: " + SUPPORTED);
        }
        return t;
    }

    private static ElementType lookup(String descr) {
        char order = descr.charAt(0);
        String code = descr.substring(1);
        ElementType t = switch (code) {
            case "f2" -> ElementType.exact(descr, DType.FLOAT16);
            case "f4" -> ElementType.exact(descr, DType.FLOAT32);
            case "f8" -> ElementType.exact(descr, DType.FLOAT64);
            case "i4" -> ElementType.exact(descr, DType.INT32);
            case "i8" -> ElementType.exact(descr, DType.INT64);
            case "b1" -> ElementType.exact(descr, DType.BOOL);
            case "i1", "i2" -> new ElementType(descr, DType.INT32, code.charAt(1) - '0', true, ByteOrder.LITTLE_ENDIAN);
            case "u1", "u2" -> new ElementType(descr, DType.INT32, code.charAt(1) - '0', false,
                    ByteOrder.LITTLE_ENDIAN);
            case "u4" -> new ElementType(descr, DType.INT64, 4, false, ByteOrder.LITTLE_ENDIAN);
            default -> null;
        };
        if (t == null) {
            return null;
        }
        return switch (order) {
            case '<' -> t;
            case '=' -> withOrder(t, ByteOrder.nativeOrder());
            case '>' -> withOrder(t, ByteOrder.BIG_ENDIAN);
            case '|' -> t.itemSize() == 1 ? t : null;
            default -> null;
        };
    }

    private static ElementType withOrder(ElementType t, ByteOrder order) {
        ByteOrder o = t.itemSize() == 1 ? ByteOrder.nativeOrder() : order;
        return new ElementType(t.name(), t.target(), t.itemSize(), t.signed(), o);
    }

    /**
     * The complete header bytes (magic, version, length, dict, padding) that {@code numpy.save} writes for
     * a C-order array: version 1.0 unless the header needs more than 65535 bytes, data start aligned to 64.
     *
     * @param descr the NumPy descr, such as {@code <f4}
     */
    public static byte[] encode(String descr, int[] shape) {
        StringBuilder dict = new StringBuilder("{'descr': '").append(descr)
                .append("', 'fortran_order': False, 'shape': ").append(tupleRepr(shape)).append(", }");
        if (shape.length > 0) {
            dict.repeat(' ', Math.max(0, GROWTH_AXIS_MAX_DIGITS - Integer.toString(shape[0]).length()));
        }
        int hlen = dict.length() + 1;
        int padV1 = ALIGN - (MAGIC.length + 2 + 2 + hlen) % ALIGN;
        boolean v1 = hlen + padV1 <= 0xffff;
        int lenSize = v1 ? 2 : 4;
        int pad = ALIGN - (MAGIC.length + 2 + lenSize + hlen) % ALIGN;
        dict.repeat(' ', pad).append('\n');
        ByteBuffer out = ByteBuffer.allocate(MAGIC.length + 2 + lenSize + dict.length()).order(ByteOrder.LITTLE_ENDIAN);
        out.put(MAGIC).put((byte) (v1 ? 1 : 2)).put((byte) 0);
        if (v1) {
            out.putShort((short) dict.length());
        } else {
            out.putInt(dict.length());
        }
        out.put(dict.toString().getBytes(StandardCharsets.ISO_8859_1));
        return out.array();
    }

    private static String tupleRepr(int[] shape) {
        if (shape.length == 1) {
            return "(" + shape[0] + ",)";
        }
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            sb.append(i > 0 ? ", " : "").append(shape[i]);
        }
        return sb.append(')').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NpyHeader h && h.type.equals(type) && h.fortranOrder == fortranOrder
                && Arrays.equals(h.shape, shape);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + Arrays.hashCode(shape) + (fortranOrder ? 1 : 0);
    }

    @Override
    public String toString() {
        return "NpyHeader[descr=" + type.name() + ", fortranOrder=" + fortranOrder + ", shape=" + Dims.str(shape) + "]";
    }

    /**
     * The subset of Python literal syntax that {@code .npy} headers use: a dict of string keys, with
     * string, {@code True}/{@code False} and tuple-of-int values (an {@code L} suffix from Python 2 allowed),
     * followed only by whitespace. Nothing is evaluated.
     */
    static final class PyLiteral {
        /** A parsed tuple, kept apart from a list so that {@code shape} must be a tuple. */
        record Tuple(List<Object> items) {
            @Override
            public String toString() {
                return items.toString().replace('[', '(').replace(']', ')');
            }
        }

        private final String text;
        private final String source;
        private int pos;

        PyLiteral(String text, String source) {
            this.text = text;
            this.source = source;
        }

        Map<String, Object> dict() throws TensorFormatException {
            skip();
            expect('{');
            Map<String, Object> map = new LinkedHashMap<>();
            skip();
            while (peek() != '}') {
                entry(map);
                skip();
                if (peek() != '}') {
                    expect(',');
                    skip();
                }
            }
            pos++;
            skip();
            if (pos < text.length()) {
                throw error("unexpected text after the header dict");
            }
            return map;
        }

        private void entry(Map<String, Object> map) throws TensorFormatException {
            int at = pos;
            if (!(value() instanceof String key)) {
                pos = at;
                throw error("dict keys must be strings");
            }
            skip();
            expect(':');
            skip();
            Object v = value();
            if (map.containsKey(key)) {
                pos = at;
                throw error("duplicate key '" + key + "'");
            }
            map.put(key, v);
        }

        private Object value() throws TensorFormatException {
            char c = peek();
            if (c == '\'' || c == '"') {
                return string(c);
            }
            if (c == '(') {
                return tuple();
            }
            if (c == '[' || c == '{') {
                throw error("nested " + (c == '[' ? "lists" : "dicts") + " are not supported (structured dtypes"
                        + " are not supported; descr must be a type string: " + SUPPORTED + ")");
            }
            if ((c >= '0' && c <= '9') || c == '-') {
                return integer();
            }
            if (text.startsWith("True", pos)) {
                pos += 4;
                return Boolean.TRUE;
            }
            if (text.startsWith("False", pos)) {
                pos += 5;
                return Boolean.FALSE;
            }
            throw error("expected a string, True, False, an int or a tuple");
        }

        private String string(char quote) throws TensorFormatException {
            int end = text.indexOf(quote, pos + 1);
            int backslash = text.indexOf('\\', pos + 1);
            if (end < 0) {
                throw error("unterminated string");
            }
            if (backslash >= 0 && backslash < end) {
                pos = backslash;
                throw error("escapes in strings are not supported");
            }
            String s = text.substring(pos + 1, end);
            pos = end + 1;
            return s;
        }

        private Tuple tuple() throws TensorFormatException {
            pos++;
            List<Object> items = new ArrayList<>();
            skip();
            boolean comma = false;
            while (peek() != ')') {
                items.add(integer());
                skip();
                comma = false;
                if (peek() != ')') {
                    expect(',');
                    comma = true;
                    skip();
                }
            }
            if (items.size() == 1 && !comma) {
                throw error("a one-element tuple needs a trailing comma, as (3,)");
            }
            pos++;
            return new Tuple(items);
        }

        private Long integer() throws TensorFormatException {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            while (peek() >= '0' && peek() <= '9') {
                pos++;
            }
            if (pos == start || (pos == start + 1 && text.charAt(start) == '-')) {
                throw error("expected an int");
            }
            String digits = text.substring(start, pos);
            if (peek() == 'L' || peek() == 'l') {
                pos++;
            }
            try {
                return Long.parseLong(digits);
            } catch (NumberFormatException e) {
                pos = start;
                throw error("int " + digits + " is out of range");
            }
        }

        private void expect(char c) throws TensorFormatException {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        private char peek() {
            return pos < text.length() ? text.charAt(pos) : 0;
        }

        private void skip() {
            while (pos < text.length() && (text.charAt(pos) == ' ' || text.charAt(pos) == '\n'
                    || text.charAt(pos) == '\t' || text.charAt(pos) == '\r')) {
                pos++;
            }
        }

        private TensorFormatException error(String problem) {
            String found = pos < text.length() ? "'" + text.charAt(pos) + "'" : "end of header";
            return new TensorFormatException(source, "bad .npy header dict at character " + pos + " (found "
                    + found + "): " + problem + "; header was: " + abbreviate(text.strip()));
        }

        private static String abbreviate(String s) {
            return s.length() <= 200 ? s : s.substring(0, 200) + "...";
        }
    }
}
