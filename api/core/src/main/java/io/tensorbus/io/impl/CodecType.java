package io.tensorbus.io.impl;

/**
 * A user type registered with an {@link io.tensorbus.io.ObjectCodec} under a name: the only kind of class
 * decoding ever instantiates by name.
 */
public sealed interface CodecType permits CodecRecordType, CodecEnumType, CodecAdapterType {
    /** The name written on the wire; the same on every process. */
    String name();

    /** The registered class. */
    Class<?> type();

    /** {@code record}, {@code enum} or {@code adapted type}, for messages. */
    String kind();
}
