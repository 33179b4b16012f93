package io.tensorbus.io;

import io.tensorbus.io.impl.CodecAdapterType;
import io.tensorbus.io.impl.CodecDecoder;
import io.tensorbus.io.impl.CodecEncoder;
import io.tensorbus.io.impl.CodecEnumType;
import io.tensorbus.io.impl.CodecRecordType;
import io.tensorbus.io.impl.CodecRegistry;
import java.lang.invoke.MethodType;
import java.util.Objects;
import java.util.function.Function;

/**
 * The typed binary codec that object collectives ({@code allGatherObject}, {@code broadcastObjectList}) and
 * RPC use where PyTorch uses pickle. Unlike pickle or Java serialization, decoding never instantiates a
 * class that the bytes name unless that class was registered with this codec: bytes from the network
 * cannot run code or build arbitrary objects.
 *
 * <h2>Values</h2>
 * {@code null}, {@link Boolean}, {@link Byte}, {@link Short}, {@link Integer}, {@link Long}, {@link Float},
 * {@link Double}, {@link Character}, {@link String}, {@code byte[]}, {@code int[]}, {@code long[]},
 * {@code float[]}, {@code double[]}, {@link io.tensorbus.tensor.Tensor} (dtype, shape, elements and the
 * requires-grad flag; not the autograd graph, and a non-contiguous tensor arrives contiguous), any
 * {@link java.util.List} (decoded as {@link java.util.ArrayList}), {@link java.util.Map}
 * ({@link java.util.LinkedHashMap}, in the encoder's iteration order), {@link java.util.Set}
 * ({@link java.util.LinkedHashSet}), and records, enums and adapted types registered with
 * {@link #register(String, Class)} or {@link #register(String, Class, Function, Function)}. Records travel as
 * their components in declaration order and are rebuilt through the canonical constructor, so a compact
 * constructor's checks run on decoded data too. Generic type arguments are not checked: a record component
 * declared {@code List<String>} receives whatever list the bytes hold.
 *
 * <h2>Format (version 1)</h2>
 * All numbers little-endian. An encoding is one version byte ({@code 1}) followed by exactly one value; a
 * value is a one-byte tag and a body:
 * <pre>
 *  tag body
 *   0  null                     (no body)
 *   1  false, 2 true            (no body)
 *   3  Byte       1 byte        4  Short   2 bytes      5  Integer 4 bytes     6  Long 8 bytes
 *   7  Float      4 bytes, raw IEEE bits                8  Double  8 bytes, raw IEEE bits
 *   9  Character  2 bytes (a UTF-16 code unit)
 *  10  String     len:i32, len bytes of UTF-8
 *  11  byte[]     n:i32, n bytes       12 int[]   n:i32, 4n bytes    13 long[]   n:i32, 8n bytes
 *  14  float[]    n:i32, 4n bytes      15 double[] n:i32, 8n bytes
 *  16  Tensor     dtype:u8 (0 float32, 1 float64, 2 float16, 3 bfloat16, 4 int32, 5 int64, 6 bool),
 *                 flags:u8 (bit 0: requires grad), rank:u8 (at most 64), rank dims:i32,
 *                 then numel * itemsize bytes, row-major
 *  17  List       n:i32, n values
 *  18  Map        n:i32, n (key value) pairs, no key twice
 *  19  Set        n:i32, n values, no value twice
 *  20  record     name (len:i32 + UTF-8, at most 256 bytes), n:i32 components, n values
 *  21  enum       type name, constant name (each len:i32 + UTF-8)
 *  22  adapted    type name, the value its adapter made
 * </pre>
 *
 * <h2>Validation</h2>
 * Decoding checks every length against the bytes left before allocating anything (so a 10-byte input
 * cannot ask for a gigabyte), strict UTF-8, dtype codes and flags, bool elements (0 or 1), that no more than
 * {@link #MAX_DEPTH} lists, maps, sets, records and adapted values nest, that the named types are
 * registered here with the same kind and component count, that record components have their declared
 * types, and that no bytes are left after the value. Any failure is a {@link CodecException} naming the byte
 * offset and the problem, including what a record constructor or adapter threw on decoded data.
 *
 * <h2>Threads</h2>
 * {@link #encode} and {@link #decode} may run concurrently on any threads. Registration is thread safe and
 * may happen while other threads encode and decode; a value of a type registered later is simply
 * unsupported until then. Register the same names for the same classes on every process, before
 * exchanging values.
 */
public final class ObjectCodec {
    /** The format version written in the first byte of every encoding. */
    public static final int FORMAT_VERSION = 1;

    /** The most levels of lists, maps, sets, records and adapted values that nest in one value. */
    public static final int MAX_DEPTH = 64;

    private static final ObjectCodec STANDARD = new ObjectCodec();

    private final CodecRegistry registry = new CodecRegistry();

    /** A codec with no registered types: it handles every built-in value kind. */
    public ObjectCodec() {
    }

    /**
     * The process-wide codec that object collectives and RPC use unless given another. Register application
     * records and enums here once at start-up, before exchanging values (registration is thread safe).
     */
    public static ObjectCodec standard() {
        return STANDARD;
    }

    /**
     * Registers a record or enum class under a wire name, so that its values can be encoded and decoded.
     * Registering the same name for the same class again does nothing. (One method for both kinds: two
     * generic overloads bounded by {@code Record} and {@code Enum} would have the same erasure.)
     *
     * @param name the name written on the wire, 1 to 256 bytes of UTF-8; the same on every process
     * @param type a record class or an enum class
     * @return this codec, for chaining
     * @throws IllegalArgumentException when {@code type} is neither a record nor an enum, the name is empty
     *     or too long, the name is registered for another class or the class under another name, or a named
     *     module does not open the record's package to tensorbus
     */
    public ObjectCodec register(String name, Class<?> type) {
        Objects.requireNonNull(type, "type");
        if (type.isRecord()) {
            registry.add(CodecRecordType.of(name, type));
        } else if (type.isEnum()) {
            registry.add(new CodecEnumType(name, type));
        } else {
            throw new IllegalArgumentException(type.getName() + " is neither a record nor an enum; register other"
                    + " classes with register(name, type, toPortable, fromPortable)");
        }
        return this;
    }

    /**
     * Registers a class that is neither a record nor an enum (a remote reference, {@code java.time.Instant})
     * through a pair of functions: encoding writes the name and the encoding of {@code toPortable(value)}
     * (any value this codec supports); decoding reads that value and returns {@code fromPortable(value)}.
     * Values that are instances of {@code type} use the adapter (so {@code type} may be an interface), unless
     * their exact class has a registration of its own.
     *
     * @param name the name written on the wire, 1 to 256 bytes of UTF-8; the same on every process
     * @param type the class or interface adapted
     * @param toPortable turns a value into a supported value; its exceptions pass to the encoder's caller
     * @param fromPortable turns the decoded supported value back; what it throws is reported as a
     *     {@link CodecException}, and so is a result that is not an instance of {@code type}
     * @return this codec, for chaining
     * @throws IllegalArgumentException when the name is empty or too long, or the name or the class is
     *     already registered differently
     */
    @SuppressWarnings("unchecked")
    public <T> ObjectCodec register(String name, Class<T> type, Function<? super T, ?> toPortable,
            Function<Object, ? extends T> fromPortable) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(toPortable, "toPortable");
        Objects.requireNonNull(fromPortable, "fromPortable");
        registry.add(new CodecAdapterType(name, type, (Function<Object, ?>) toPortable, fromPortable));
        return this;
    }

    /**
     * Encodes a value.
     *
     * @return a new array: the version byte and the value
     * @throws IllegalArgumentException naming the class of a value (or nested value) that is not supported,
     *     a record or enum that is not registered, values nested more than {@link #MAX_DEPTH} levels (a
     *     collection that contains itself), a string with a lone surrogate, a tensor of more than 64
     *     dimensions, or an encoding larger than a byte array holds (about 2 GiB)
     */
    public byte[] encode(Object value) {
        return CodecEncoder.encode(registry, value, MAX_DEPTH);
    }

    /**
     * Decodes bytes written by {@link #encode(Object)} of a codec with the same registrations.
     *
     * @return the value; collections are new mutable {@code ArrayList}, {@code LinkedHashMap} and
     *     {@code LinkedHashSet}s, tensors own new memory
     * @throws CodecException when the bytes are malformed or name a type not registered here
     * @throws NullPointerException when {@code bytes} is null
     */
    public Object decode(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return CodecDecoder.decode(registry, bytes, MAX_DEPTH);
    }

    /**
     * Decodes bytes and checks the type of the value.
     *
     * @param expected the class the value must be an instance of (a primitive class such as {@code int.class}
     *     means its wrapper and rejects null); null passes for any other class
     * @throws CodecException when the bytes are malformed or hold a value of another type
     */
    @SuppressWarnings("unchecked")
    public <T> T decode(byte[] bytes, Class<T> expected) {
        Objects.requireNonNull(expected, "expected");
        Object v = decode(bytes);
        Class<?> boxed = MethodType.methodType(expected).wrap().returnType();
        if (v == null ? expected.isPrimitive() : !boxed.isInstance(v)) {
            throw new CodecException(-1, "expected a " + expected.getName() + " but the bytes hold "
                    + (v == null ? "null" : "a " + v.getClass().getName()));
        }
        return (T) v;
    }
}
