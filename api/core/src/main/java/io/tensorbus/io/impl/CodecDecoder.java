package io.tensorbus.io.impl;

import io.tensorbus.io.CodecException;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Reads one value in {@link io.tensorbus.io.ObjectCodec}'s format. The only classes it instantiates are
 * the value types of the format and the types registered in its {@link CodecRegistry}. Used once, by one
 * thread.
 */
public final class CodecDecoder {
    private final CodecRegistry registry;
    private final CodecReader in;
    private final int maxDepth;

    private CodecDecoder(CodecRegistry registry, CodecReader in, int maxDepth) {
        this.registry = registry;
        this.in = in;
        this.maxDepth = maxDepth;
    }

    /**
     * Decodes the version byte and exactly one value.
     *
     * @throws CodecException for any malformed input, unknown type name, or bytes left after the value
     */
    public static Object decode(CodecRegistry registry, byte[] bytes, int maxDepth) {
        CodecReader in = new CodecReader(bytes);
        int version = in.u8("format version byte");
        if (version != CodecTag.VERSION) {
            throw new CodecException(0, "unsupported format version " + version + "; this tensorbus reads version "
                    + CodecTag.VERSION);
        }
        Object v = new CodecDecoder(registry, in, maxDepth).value(0);
        if (in.remaining() > 0) {
            throw new CodecException(in.position(), in.remaining() + " bytes are left after the value; an"
                    + " encoding holds exactly one value");
        }
        return v;
    }

    private Object value(int depth) {
        int at = in.position();
        int tag = in.u8("value tag");
        return switch (tag) {
            case CodecTag.NULL -> null;
            case CodecTag.FALSE -> Boolean.FALSE;
            case CodecTag.TRUE -> Boolean.TRUE;
            case CodecTag.BYTE -> (byte) in.u8("byte");
            case CodecTag.SHORT -> in.i16("short");
            case CodecTag.INT -> in.i32("int");
            case CodecTag.LONG -> in.i64("long");
            case CodecTag.FLOAT -> Float.intBitsToFloat(in.i32("float"));
            case CodecTag.DOUBLE -> Double.longBitsToDouble(in.i64("double"));
            case CodecTag.CHAR -> (char) in.i16("char");
            case CodecTag.STRING -> string("string", Integer.MAX_VALUE);
            case CodecTag.BYTES -> in.bytes(in.count("byte[]", 1), "byte[] elements");
            case CodecTag.INTS -> array(new int[in.count("int[]", 4)], ValueLayout.JAVA_INT, "int[]");
            case CodecTag.LONGS -> array(new long[in.count("long[]", 8)], ValueLayout.JAVA_LONG, "long[]");
            case CodecTag.FLOATS -> array(new float[in.count("float[]", 4)], ValueLayout.JAVA_FLOAT, "float[]");
            case CodecTag.DOUBLES -> array(new double[in.count("double[]", 8)], ValueLayout.JAVA_DOUBLE, "double[]");
            case CodecTag.TENSOR -> CodecTensors.read(in, at);
            case CodecTag.ENUM -> enumConstant(at);
            case CodecTag.LIST, CodecTag.SET, CodecTag.MAP, CodecTag.RECORD,
                    CodecTag.CUSTOM -> composite(tag, at, depth);
            default -> throw new CodecException(at, "unknown value tag " + tag + "; format version " + CodecTag.VERSION
                    + " has tags 0 to " + CodecTag.LAST);
        };
    }

    private <A> A array(A array, ValueLayout layout, String what) {
        in.array(array, layout, Array.getLength(array), what + " elements");
        return array;
    }

    private String string(String what, int maxBytes) {
        int at = in.position();
        int n = in.count(what, 1);
        if (n > maxBytes) {
            throw new CodecException(at, what + " of " + n + " bytes is longer than the " + maxBytes + " allowed");
        }
        return in.utf8(n, what);
    }

    private Object composite(int tag, int at, int depth) {
        if (depth >= maxDepth) {
            throw new CodecException(at, "values nest more than " + maxDepth + " levels of lists, maps, sets and"
                    + " records, the most this codec decodes");
        }
        return switch (tag) {
            case CodecTag.LIST -> list(depth);
            case CodecTag.SET -> set(depth);
            case CodecTag.MAP -> map(depth);
            case CodecTag.RECORD -> record(at, depth);
            default -> custom(at, depth);
        };
    }

    private List<Object> list(int depth) {
        int n = in.count("list", 1);
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(value(depth + 1));
        }
        return list;
    }

    private Set<Object> set(int depth) {
        int n = in.count("set", 1);
        Set<Object> set = LinkedHashSet.newLinkedHashSet(n);
        for (int i = 0; i < n; i++) {
            int at = in.position();
            Object v = value(depth + 1);
            if (!userCode(at, "adding a set element", () -> set.add(v))) {
                throw new CodecException(at, "set element " + i + " repeats an earlier element; a set holds each once");
            }
        }
        return set;
    }

    private Map<Object, Object> map(int depth) {
        int n = in.count("map", 2);
        Map<Object, Object> map = LinkedHashMap.newLinkedHashMap(n);
        for (int i = 0; i < n; i++) {
            int at = in.position();
            Object k = value(depth + 1);
            Object v = value(depth + 1);
            if (userCode(at, "adding a map entry", () -> putNew(map, k, v))) {
                throw new CodecException(at, "map key " + i + " repeats an earlier key; a map holds each key once");
            }
        }
        return map;
    }

    /** Puts a new key; returns true, changing nothing, when the key is already there. */
    private static boolean putNew(Map<Object, Object> map, Object k, Object v) {
        if (map.containsKey(k)) {
            return true;
        }
        map.put(k, v);
        return false;
    }

    private Object record(int at, int depth) {
        CodecRecordType t = registered(at, "record", CodecRecordType.class);
        int countAt = in.position();
        int n = in.i32("record component count");
        if (n != t.arity()) {
            throw new CodecException(countAt, "record '" + t.name() + "' (" + t.type().getName() + ") has "
                    + t.arity() + " components but the bytes hold " + n
                    + "; do both sides have the same version of it?");
        }
        Object[] values = new Object[n];
        for (int i = 0; i < n; i++) {
            int vAt = in.position();
            values[i] = value(depth + 1);
            checkComponent(t, i, values[i], vAt);
        }
        try {
            return t.construct(values);
        } catch (InvocationTargetException e) {
            throw new CodecException(at, "the constructor of record '" + t.name() + "' (" + t.type().getName()
                    + ") rejected the decoded components: " + e.getCause(), e.getCause());
        }
    }

    private static void checkComponent(CodecRecordType t, int i, Object v, int at) {
        Class<?> declared = t.componentType(i);
        boolean ok = v == null ? !declared.isPrimitive()
                : MethodType.methodType(declared).wrap().returnType().isInstance(v);
        if (!ok) {
            throw new CodecException(at, "component '" + t.componentName(i) + "' of record '" + t.name()
                    + "' is declared " + declared.getName() + " but the bytes hold "
                    + (v == null ? "null" : "a " + v.getClass().getName()));
        }
    }

    private Object enumConstant(int at) {
        CodecEnumType t = registered(at, "enum", CodecEnumType.class);
        int nameAt = in.position();
        String constant = string("enum constant name", CodecRegistry.MAX_NAME_BYTES);
        Enum<?> e = t.constant(constant);
        if (e == null) {
            throw new CodecException(nameAt, "enum '" + t.name() + "' (" + t.type().getName() + ") has no constant '"
                    + constant + "'; its constants are " + t.constantNames());
        }
        return e;
    }

    private Object custom(int at, int depth) {
        CodecAdapterType t = registered(at, "adapted type", CodecAdapterType.class);
        Object portable = value(depth + 1);
        Object v = userCode(at, "the adapter of '" + t.name() + "'", () -> t.fromPortable(portable));
        if (v != null && !t.type().isInstance(v)) {
            throw new CodecException(at, "the adapter of '" + t.name() + "' returned a " + v.getClass().getName()
                    + ", not a " + t.type().getName());
        }
        return v;
    }

    private <T extends CodecType> T registered(int at, String kind, Class<T> expected) {
        String name = string(kind + " type name", CodecRegistry.MAX_NAME_BYTES);
        CodecType t = registry.byName(name);
        if (t == null) {
            throw new CodecException(at, kind + " type '" + name + "' is not registered with this codec (registered: "
                    + registry.names() + "); register it under the same name on every process");
        }
        if (!expected.isInstance(t)) {
            throw new CodecException(at, "type '" + name + "' is registered as " + t.kind() + " "
                    + t.type().getName() + " here, but the bytes hold a " + kind + " of that name");
        }
        return expected.cast(t);
    }

    /** Runs code that may call user methods (hashCode, equals, an adapter) and reports what it throws. */
    private static <T> T userCode(int at, String what, Supplier<T> body) {
        try {
            return body.get();
        } catch (RuntimeException | StackOverflowError e) {
            throw new CodecException(at, what + " failed: " + e, e);
        }
    }
}
