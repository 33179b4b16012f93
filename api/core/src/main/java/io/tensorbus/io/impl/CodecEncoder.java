package io.tensorbus.io.impl;

import io.tensorbus.tensor.Tensor;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Writes one value in {@link io.tensorbus.io.ObjectCodec}'s format. Used once, by one thread. */
public final class CodecEncoder {
    /** What can be encoded, for the message about a value that cannot. */
    static final String SUPPORTED = "null, Boolean, Byte, Short, Integer, Long, Float, Double, Character, String,"
            + " byte[], int[], long[], float[], double[], Tensor, List, Map, Set, and records, enums and adapted"
            + " types registered with ObjectCodec.register";

    private final CodecRegistry registry;
    private final int maxDepth;
    private final CodecWriter out = new CodecWriter();

    private CodecEncoder(CodecRegistry registry, int maxDepth) {
        this.registry = registry;
        this.maxDepth = maxDepth;
    }

    /**
     * The version byte followed by {@code value}.
     *
     * @throws IllegalArgumentException naming the class of a value that cannot be encoded, or when
     *     containers nest deeper than {@code maxDepth}
     */
    public static byte[] encode(CodecRegistry registry, Object value, int maxDepth) {
        CodecEncoder e = new CodecEncoder(registry, maxDepth);
        e.out.u8(CodecTag.VERSION);
        e.value(value, 0);
        return e.out.toByteArray();
    }

    private void value(Object v, int depth) {
        switch (v) {
            case null -> out.u8(CodecTag.NULL);
            case Boolean b -> out.u8(b ? CodecTag.TRUE : CodecTag.FALSE);
            case Byte b -> tagged(CodecTag.BYTE).u8(b);
            case Short s -> tagged(CodecTag.SHORT).i16(s);
            case Integer i -> tagged(CodecTag.INT).i32(i);
            case Long l -> tagged(CodecTag.LONG).i64(l);
            case Float f -> tagged(CodecTag.FLOAT).i32(Float.floatToRawIntBits(f));
            case Double d -> tagged(CodecTag.DOUBLE).i64(Double.doubleToRawLongBits(d));
            case Character c -> tagged(CodecTag.CHAR).i16(c);
            case String s -> string(tagged(CodecTag.STRING), s);
            case byte[] a -> {
                tagged(CodecTag.BYTES).i32(a.length);
                out.bytes(a);
            }
            case int[] a -> array(CodecTag.INTS, a, ValueLayout.JAVA_INT, a.length);
            case long[] a -> array(CodecTag.LONGS, a, ValueLayout.JAVA_LONG, a.length);
            case float[] a -> array(CodecTag.FLOATS, a, ValueLayout.JAVA_FLOAT, a.length);
            case double[] a -> array(CodecTag.DOUBLES, a, ValueLayout.JAVA_DOUBLE, a.length);
            case Tensor t -> CodecTensors.write(out, t);
            default -> composite(v, depth);
        }
    }

    private CodecWriter tagged(int tag) {
        out.u8(tag);
        return out;
    }

    private void array(int tag, Object array, ValueLayout layout, int length) {
        tagged(tag).i32(length);
        out.array(array, layout, length);
    }

    private void composite(Object v, int depth) {
        CodecType t = registry.forValue(v);
        // Enum constants hold no values, so (as in the decoder) they do not count as a nesting level.
        if (depth >= maxDepth && !(t instanceof CodecEnumType)) {
            throw new IllegalArgumentException("the value nests more than " + maxDepth + " levels of lists, maps,"
                    + " sets and records; does a collection contain itself?");
        }
        if (t != null) {
            registered(t, v, depth);
            return;
        }
        switch (v) {
            case List<?> l -> sequence(CodecTag.LIST, l.toArray(), depth);
            case Set<?> s -> sequence(CodecTag.SET, s.toArray(), depth);
            case Map<?, ?> m -> map(m, depth);
            default -> throw unsupported(v);
        }
    }

    private void sequence(int tag, Object[] items, int depth) {
        // A snapshot, so that the count written matches the items written even if the collection changes.
        tagged(tag).i32(items.length);
        for (Object item : items) {
            value(item, depth + 1);
        }
    }

    private void map(Map<?, ?> m, int depth) {
        List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
        tagged(CodecTag.MAP).i32(entries.size());
        for (Map.Entry<?, ?> e : entries) {
            value(e.getKey(), depth + 1);
            value(e.getValue(), depth + 1);
        }
    }

    private void registered(CodecType t, Object v, int depth) {
        switch (t) {
            case CodecRecordType r -> {
                string(tagged(CodecTag.RECORD), r.name());
                Object[] components = r.components(v);
                out.i32(components.length);
                for (Object c : components) {
                    value(c, depth + 1);
                }
            }
            case CodecEnumType e -> {
                string(tagged(CodecTag.ENUM), e.name());
                string(out, ((Enum<?>) v).name());
            }
            case CodecAdapterType a -> {
                string(tagged(CodecTag.CUSTOM), a.name());
                value(a.toPortable(v), depth + 1);
            }
        }
    }

    private static void string(CodecWriter out, String s) {
        ByteBuffer b;
        try {
            // A strict encoder: getBytes would turn a lone surrogate into '?' and change the string silently.
            b = StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(s));
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("cannot encode a string that is not valid UTF-16 (a lone"
                    + " surrogate?): " + e, e);
        }
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        out.i32(bytes.length);
        out.bytes(bytes);
    }

    private static IllegalArgumentException unsupported(Object v) {
        Class<?> c = v.getClass();
        if (c.isRecord() || v instanceof Enum<?>) {
            Class<?> type = v instanceof Enum<?> e ? e.getDeclaringClass() : c;
            return new IllegalArgumentException((c.isRecord() ? "record " : "enum ") + type.getName()
                    + " is not registered with this codec; call register(\"" + type.getSimpleName() + "\", "
                    + type.getSimpleName() + ".class) on the codec of every process that sends or receives it");
        }
        return new IllegalArgumentException("cannot encode a value of class " + c.getName() + "; supported: "
                + SUPPORTED);
    }
}
