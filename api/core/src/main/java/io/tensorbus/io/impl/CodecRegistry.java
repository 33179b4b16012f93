package io.tensorbus.io.impl;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The user types one codec knows, by wire name and by class. Lookups are lock-free; registrations are
 * serialised so that the name and class maps never disagree.
 */
public final class CodecRegistry {
    /** The longest type name, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 256;

    private final Map<String, CodecType> byName = new ConcurrentHashMap<>();
    private final Map<Class<?>, CodecType> byClass = new ConcurrentHashMap<>();
    // Adapters may be registered for interfaces, so encoding also looks for one the value is an instance of.
    private final List<CodecAdapterType> adapters = new CopyOnWriteArrayList<>();

    /**
     * Adds a type. Registering the same name for the same class again is allowed and changes nothing, so
     * that every component of a program can register what it needs.
     *
     * @throws IllegalArgumentException when the name is empty or too long, or the name or the class is
     *     already registered differently
     */
    public synchronized void add(CodecType t) {
        checkName(t.name());
        CodecType sameName = byName.get(t.name());
        CodecType sameClass = byClass.get(t.type());
        if (sameName != null && sameName == sameClass && sameName.kind().equals(t.kind())) {
            return;
        }
        if (sameName != null) {
            throw new IllegalArgumentException("type name '" + t.name() + "' is already registered for "
                    + sameName.kind() + " " + sameName.type().getName() + "; each name names one class");
        }
        if (sameClass != null) {
            throw new IllegalArgumentException(t.type().getName() + " is already registered as '"
                    + sameClass.name() + "'; each class has one name");
        }
        byName.put(t.name(), t);
        byClass.put(t.type(), t);
        if (t instanceof CodecAdapterType a) {
            adapters.add(a);
        }
    }

    /** The type registered under {@code name}, or null. */
    public CodecType byName(String name) {
        return byName.get(name);
    }

    /**
     * The registered type that encodes {@code value}: the entry for its exact class (for an enum constant
     * with a body, its declaring enum), else the first adapter whose type the value is an instance of, else
     * null.
     */
    public CodecType forValue(Object value) {
        Class<?> c = value instanceof Enum<?> e ? e.getDeclaringClass() : value.getClass();
        CodecType t = byClass.get(c);
        if (t != null) {
            return t;
        }
        for (CodecAdapterType a : adapters) {
            if (a.type().isInstance(value)) {
                return a;
            }
        }
        return null;
    }

    /** The registered names, sorted, as {@code [a, b]}; at most 20 then a count, for messages. */
    public String names() {
        List<String> all = List.copyOf(new TreeSet<>(byName.keySet()));
        if (all.size() <= 20) {
            return all.toString();
        }
        return all.subList(0, 20).toString().replace("]", ", ... " + (all.size() - 20) + " more]");
    }

    private static void checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a type name must not be null or empty");
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("type name '" + name.substring(0, 40) + "...' is " + bytes
                    + " bytes of UTF-8; at most " + MAX_NAME_BYTES + " are allowed");
        }
    }
}
