package io.tensorbus.internal.io;

import io.tensorbus.io.TensorFormatException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON (RFC 8259) reader and writer, enough for safetensors headers, with no dependency.
 *
 * <p>Values map to Java as: object to {@link LinkedHashMap} (member order kept), array to {@link ArrayList},
 * string to {@link String}, integer to {@link Long} (or {@link BigInteger} beyond the long range), number
 * with a fraction or exponent to {@link Double}, {@code true}/{@code false} to {@link Boolean}, {@code null}
 * to Java {@code null}. The reader refuses everything RFC 8259 does not allow (comments, trailing commas,
 * single quotes, leading zeros, {@code NaN}, unescaped control characters, lone surrogates) and also
 * duplicate member names and nesting deeper than a limit, so a hostile header cannot exhaust the stack.
 */
public final class Json {
    /** Default nesting limit of {@link #parse(String, String)}: objects and arrays inside each other. */
    public static final int DEFAULT_MAX_DEPTH = 64;

    private final String text;
    private final String source;
    private final int maxDepth;
    private int pos;
    private int depth;

    private Json(String text, String source, int maxDepth) {
        this.text = text;
        this.source = source;
        this.maxDepth = maxDepth;
    }

    /**
     * Parses one JSON value (surrounded by optional whitespace) with the default depth limit.
     *
     * @param text the JSON text
     * @param source names the input in error messages (a file name), or null
     * @return the value, mapped as the class comment says
     * @throws TensorFormatException when the text is not exactly one valid JSON value; the message gives
     *     the offset, line and column of the problem
     */
    public static Object parse(String text, String source) throws TensorFormatException {
        return parse(text, source, DEFAULT_MAX_DEPTH);
    }

    /**
     * Parses one JSON value with a nesting limit.
     *
     * @param maxDepth how many objects and arrays may nest, at least 1
     * @throws TensorFormatException as {@link #parse(String, String)}, also when nesting exceeds maxDepth
     * @throws IllegalArgumentException when maxDepth is below 1
     */
    public static Object parse(String text, String source, int maxDepth) throws TensorFormatException {
        if (maxDepth < 1) {
            throw new IllegalArgumentException("maxDepth must be >= 1, got " + maxDepth);
        }
        Json p = new Json(text, source, maxDepth);
        p.skipWhitespace();
        Object value = p.value();
        p.skipWhitespace();
        if (p.pos < text.length()) {
            throw p.error("unexpected " + p.describeHere() + " after the JSON value; only whitespace may follow");
        }
        return value;
    }

    /**
     * Writes a value as compact JSON (no spaces), as {@code serde_json::to_string} does.
     *
     * @param value a {@link Map} with String keys, {@link List}, String, {@link Number} (finite), Boolean
     *     or null, nested in any way
     * @return the JSON text
     * @throws IllegalArgumentException for other types, non-String keys, NaN or infinite numbers
     */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        writeValue(sb, value);
        return sb.toString();
    }

    // ---------------------------------------------------------------- reader

    private Object value() throws TensorFormatException {
        if (pos >= text.length()) {
            throw error("expected a value, found end of input");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("expected a value (object, array, string, number, true, false or null), found "
                        + describeHere());
            }
        };
    }

    private Map<String, Object> object() throws TensorFormatException {
        enter();
        pos++;
        Map<String, Object> map = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            depth--;
            return map;
        }
        while (true) {
            member(map);
            skipWhitespace();
            char c = peek();
            pos++;
            if (c == '}') {
                depth--;
                return map;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}' in an object, found " + describeHere());
            }
            skipWhitespace();
        }
    }

    private void member(Map<String, Object> map) throws TensorFormatException {
        if (peek() != '"') {
            throw error("expected a member name in double quotes, found " + describeHere());
        }
        int at = pos;
        String key = string();
        skipWhitespace();
        expect(':');
        skipWhitespace();
        Object v = value();
        if (map.containsKey(key)) {
            pos = at;
            throw error("duplicate member name \"" + key + "\"; each name may appear once in an object");
        }
        map.put(key, v);
    }

    private List<Object> array() throws TensorFormatException {
        enter();
        pos++;
        List<Object> list = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            depth--;
            return list;
        }
        while (true) {
            list.add(value());
            skipWhitespace();
            char c = peek();
            pos++;
            if (c == ']') {
                depth--;
                return list;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']' in an array, found " + describeHere());
            }
            skipWhitespace();
        }
    }

    private void enter() throws TensorFormatException {
        if (++depth > maxDepth) {
            throw error("nesting deeper than " + maxDepth + " objects/arrays");
        }
    }

    private String string() throws TensorFormatException {
        int start = pos;
        pos++;
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string, found end of input");
            }
            char c = text.charAt(pos);
            if (c == '"') {
                pos++;
                return checkSurrogates(sb.toString(), start);
            }
            if (c < 0x20) {
                throw error(String.format("control character U+%04X in a string; escape it (\\n, \\u00XX)", (int) c));
            }
            if (c == '\\') {
                escape(sb);
            } else {
                sb.append(c);
                pos++;
            }
        }
    }

    private void escape(StringBuilder sb) throws TensorFormatException {
        pos++;
        char e = peek();
        switch (e) {
            case '"', '\\', '/' -> sb.append(e);
            case 'b' -> sb.append('\b');
            case 'f' -> sb.append('\f');
            case 'n' -> sb.append('\n');
            case 'r' -> sb.append('\r');
            case 't' -> sb.append('\t');
            case 'u' -> sb.append(hex4());
            default -> throw error("invalid escape " + describeHere()
                    + "; allowed: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        }
        pos++;
    }

    /** Reads the 4 hex digits after the 'u' at the position; leaves the position on the last digit. */
    private char hex4() throws TensorFormatException {
        int value = 0;
        for (int i = 0; i < 4; i++) {
            pos++;
            int d = hexDigit(peek());
            if (d < 0) {
                throw error("\\u escape needs 4 hex digits, found " + describeHere());
            }
            value = value * 16 + d;
        }
        return (char) value;
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }

    /** Refuses strings with unpaired UTF-16 surrogates (from escapes), which are not valid Unicode text. */
    private String checkSurrogates(String s, int start) throws TensorFormatException {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                pos = start;
                throw error(String.format("string has an unpaired surrogate U+%04X (not valid Unicode)", (int) c));
            }
        }
        return s;
    }

    private Object number() throws TensorFormatException {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
            if (isDigit(peek())) {
                throw error("leading zeros are not allowed in numbers");
            }
        } else {
            digits("a digit");
        }
        boolean integral = true;
        if (peek() == '.') {
            pos++;
            digits("a digit after the decimal point");
            integral = false;
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            digits("a digit in the exponent");
            integral = false;
        }
        return toNumber(text.substring(start, pos), integral);
    }

    private static Object toNumber(String literal, boolean integral) {
        if (!integral) {
            return new BigDecimal(literal).doubleValue();
        }
        BigInteger big = new BigInteger(literal);
        return big.bitLength() < 64 ? (Object) big.longValue() : big;
    }

    private void digits(String what) throws TensorFormatException {
        if (!isDigit(peek())) {
            throw error("expected " + what + ", found " + describeHere());
        }
        while (isDigit(peek())) {
            pos++;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private Object literal(String word, Object value) throws TensorFormatException {
        if (!text.startsWith(word, pos)) {
            throw error("expected a value (object, array, string, number, true, false or null), found "
                    + describeHere());
        }
        pos += word.length();
        return value;
    }

    private void expect(char c) throws TensorFormatException {
        if (peek() != c) {
            throw error("expected '" + c + "', found " + describeHere());
        }
        pos++;
    }

    /** The character at the position, or 0 at the end (0 never matches anything the grammar wants). */
    private char peek() {
        return pos < text.length() ? text.charAt(pos) : 0;
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private String describeHere() {
        if (pos >= text.length()) {
            return "end of input";
        }
        char c = text.charAt(pos);
        return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
    }

    private TensorFormatException error(String problem) {
        int line = 1;
        int column = 1;
        for (int i = 0; i < Math.min(pos, text.length()); i++) {
            if (text.charAt(i) == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        return new TensorFormatException(source, "invalid JSON at offset " + pos + " (line " + line + ", column "
                + column + "): " + problem);
    }

    // ---------------------------------------------------------------- writer

    private static void writeValue(StringBuilder sb, Object v) {
        switch (v) {
            case null -> sb.append("null");
            case String s -> writeString(sb, s);
            case Boolean b -> sb.append(b);
            case Double d -> sb.append(finite(d));
            case Float f -> sb.append(finite(f.doubleValue()));
            case Number n -> sb.append(n);
            case Map<?, ?> m -> writeObject(sb, m);
            case List<?> l -> writeArray(sb, l);
            default -> throw new IllegalArgumentException("cannot write " + v.getClass().getName()
                    + " as JSON; allowed: Map, List, String, Number, Boolean, null");
        }
    }

    private static String finite(double d) {
        if (!Double.isFinite(d)) {
            throw new IllegalArgumentException("JSON has no representation for " + d);
        }
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) + ".0" : Double.toString(d);
    }

    private static void writeObject(StringBuilder sb, Map<?, ?> m) {
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getKey() instanceof String key)) {
                throw new IllegalArgumentException("JSON object keys must be Strings, got " + e.getKey());
            }
            if (!first) {
                sb.append(',');
            }
            first = false;
            writeString(sb, key);
            sb.append(':');
            writeValue(sb, e.getValue());
        }
        sb.append('}');
    }

    private static void writeArray(StringBuilder sb, List<?> l) {
        sb.append('[');
        for (int i = 0; i < l.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            writeValue(sb, l.get(i));
        }
        sb.append(']');
    }

    private static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
