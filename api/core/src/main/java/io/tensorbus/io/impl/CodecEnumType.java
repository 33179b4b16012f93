package io.tensorbus.io.impl;

import java.util.HashMap;
import java.util.Map;

/** A registered enum: constants travel by name, so reordering constants does not change their meaning. */
public final class CodecEnumType implements CodecType {
    private final String name;
    private final Class<?> type;
    private final Map<String, Enum<?>> constants = new HashMap<>();

    /**
     * Indexes the constants of an enum class.
     *
     * @throws IllegalArgumentException when {@code type} is not an enum class
     */
    public CodecEnumType(String name, Class<?> type) {
        if (!type.isEnum()) {
            throw new IllegalArgumentException(type.getName() + " is not an enum class");
        }
        this.name = name;
        this.type = type;
        for (Object c : type.getEnumConstants()) {
            Enum<?> e = (Enum<?>) c;
            constants.put(e.name(), e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Class<?> type() {
        return type;
    }

    @Override
    public String kind() {
        return "enum";
    }

    /** The constant called {@code constant}, or null when this enum has none of that name. */
    public Enum<?> constant(String constant) {
        return constants.get(constant);
    }

    /** The constant names, for messages. */
    public String constantNames() {
        return String.join(", ", constants.keySet().stream().sorted().toList());
    }
}
