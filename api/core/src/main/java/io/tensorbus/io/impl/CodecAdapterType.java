package io.tensorbus.io.impl;

import java.util.function.Function;

/**
 * A type registered with a pair of functions that turn its values into a value the codec supports (a
 * record, a list, a string...) and back: how types that are neither records nor enums (an RRef, a
 * {@code java.time.Instant}) cross the wire without their class being instantiated reflectively.
 */
public final class CodecAdapterType implements CodecType {
    private final String name;
    private final Class<?> type;
    private final Function<Object, ?> toPortable;
    private final Function<Object, ?> fromPortable;

    /**
     * Creates the adapter.
     *
     * @param toPortable turns a value of {@code type} into a supported value
     * @param fromPortable turns a decoded supported value back into a value of {@code type}
     */
    public CodecAdapterType(String name, Class<?> type, Function<Object, ?> toPortable, Function<Object,
            ?> fromPortable) {
        this.name = name;
        this.type = type;
        this.toPortable = toPortable;
        this.fromPortable = fromPortable;
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
        return "adapted type";
    }

    /** The portable form of {@code value} (exceptions of the user function pass through). */
    public Object toPortable(Object value) {
        return toPortable.apply(value);
    }

    /** The value of a decoded portable form (exceptions of the user function pass through). */
    public Object fromPortable(Object portable) {
        return fromPortable.apply(portable);
    }
}
