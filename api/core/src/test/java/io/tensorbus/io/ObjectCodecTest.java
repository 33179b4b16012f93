package io.tensorbus.io;

import static io.tensorbus.io.IoTesting.assertSameTensor;
import static io.tensorbus.io.IoTesting.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(60)
class ObjectCodecTest {
    record Point(int x, int y) {
    }

    record Line(Point from, Point to, String label) {
    }

    record Drawing(String title, List<Line> lines, Map<String, Point> anchors, Color color, Tensor pixels,
            double scale, Point origin) {
    }

    record Positive(int value) {
        Positive {
            if (value <= 0) {
                throw new IllegalArgumentException("value must be > 0, got " + value);
            }
        }
    }

    record AnyInt(int value) {
    }

    record Named(String value) {
    }

    record Pair(Object first, Object second) {
    }

    record Empty() {
    }

    enum Color {
        RED,
        GREEN {
            @Override
            public String toString() {
                return "green (a constant with a body)";
            }
        },
        BLUE
    }

    enum FewColors {
        RED
    }

    private static ObjectCodec drawingCodec() {
        return new ObjectCodec()
                .register("Point", Point.class)
                .register("Line", Line.class)
                .register("Drawing", Drawing.class)
                .register("Color", Color.class)
                .register("Pair", Pair.class)
                .register("Empty", Empty.class);
    }

    private static final ObjectCodec CODEC = drawingCodec();

    private static Object roundTrip(Object v) {
        return CODEC.decode(CODEC.encode(v));
    }

    private static CodecException assertCodecError(Executable body, String... parts) {
        CodecException e = assertThrows(CodecException.class, body);
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' lacks '" + p + "'");
        }
        return e;
    }

    private static IllegalArgumentException assertEncodeError(Object value, String... parts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CODEC.encode(value));
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' lacks '" + p + "'");
        }
        return e;
    }

    /** Bytes built by hand, little-endian, for malformed inputs. */
    private static byte[] bytes(Consumer<ByteBuffer> body) {
        ByteBuffer b = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        body.accept(b);
        return Arrays.copyOf(b.array(), b.position());
    }

    // ---------------------------------------------------------------- round trips

    @Test
    void roundTripsEveryScalarKindWithItsExactClass() {
        List<Object> values = Arrays.asList(null, true, false, (byte) -3, (short) -30000, Integer.MIN_VALUE,
                Long.MAX_VALUE, 1.5f, Float.NaN, -0.0f, Double.MIN_VALUE, Double.NEGATIVE_INFINITY, 'x',
                '\uffff', "", "héllo ☃ 😀 \u0000");
        for (Object v : values) {
            Object back = roundTrip(v);
            assertEquals(v, back, () -> "value " + v);
            if (v != null) {
                assertSame(v.getClass(), back.getClass(), () -> "class of " + v);
            }
        }
    }

    @Test
    void keepsFloatBitsExactlyIncludingNaNPayloads() {
        float nan = Float.intBitsToFloat(0x7fc00123);
        assertEquals(0x7fc00123, Float.floatToRawIntBits((Float) roundTrip(nan)));
        double dnan = Double.longBitsToDouble(0x7ff8000000000abcL);
        assertEquals(0x7ff8000000000abcL, Double.doubleToRawLongBits((Double) roundTrip(dnan)));
    }

    @Test
    void roundTripsPrimitiveArrays() {
        assertArrayEquals(new byte[] {1, -2, 127}, (byte[]) roundTrip(new byte[] {1, -2, 127}));
        assertArrayEquals(new int[] {1, -2, Integer.MAX_VALUE},
                (int[]) roundTrip(new int[] {1, -2, Integer.MAX_VALUE}));
        assertArrayEquals(new long[] {Long.MIN_VALUE, 0}, (long[]) roundTrip(new long[] {Long.MIN_VALUE, 0}));
        assertArrayEquals(new float[] {0.25f, -1e30f}, (float[]) roundTrip(new float[] {0.25f, -1e30f}));
        assertArrayEquals(new double[] {Math.PI}, (double[]) roundTrip(new double[] {Math.PI}));
        assertArrayEquals(new int[0], (int[]) roundTrip(new int[0]));
        assertArrayEquals(new byte[0], (byte[]) roundTrip(new byte[0]));
    }

    @Test
    void roundTripsNestedListsMapsAndSetsKeepingOrderAndDecodingMutableCollections() {
        Map<Object, Object> map = new LinkedHashMap<>();
        map.put("zeta", List.of(1, 2L, "three"));
        map.put("alpha", Map.of("inner", new ArrayList<>(List.of())));
        map.put(7, Set.of("x"));
        map.put(List.of("a", "key"), null);
        map.put(null, "null key");
        Set<Object> set = new LinkedHashSet<>(List.of("c", "a", "b", 3));
        List<Object> value = List.of(map, set, List.of(List.of(List.of("deep"))), "tail");

        Object back = roundTrip(value);
        assertEquals(value, back);
        List<?> list = assertInstanceOf(ArrayList.class, back);
        LinkedHashMap<?, ?> m = assertInstanceOf(LinkedHashMap.class, list.get(0));
        assertEquals(List.of("zeta", "alpha", 7, List.of("a", "key")), new ArrayList<>(m.keySet()).subList(0, 4));
        assertInstanceOf(LinkedHashSet.class, m.get(7));
        LinkedHashSet<?> s = assertInstanceOf(LinkedHashSet.class, list.get(1));
        assertEquals(List.of("c", "a", "b", 3), new ArrayList<>(s));
        ((List<Object>) list).add("decoded lists are mutable");
    }

    @Test
    void pinsTheDocumentedLittleEndianLayout() {
        assertArrayEquals(new byte[] {1, 5, 1, 0, 0, 0}, CODEC.encode(1));
        assertArrayEquals(new byte[] {1, 10, 2, 0, 0, 0, 'h', 'i'}, CODEC.encode("hi"));
        assertArrayEquals(new byte[] {1, 17, 2, 0, 0, 0, 0, 2}, CODEC.encode(Arrays.asList(null, true)));
        // tensor: tag, dtype int32 (4), flags, rank 1, dim 2, elements
        assertArrayEquals(new byte[] {1, 16, 4, 0, 1, 2, 0, 0, 0, 7, 0, 0, 0, -1, -1, -1, -1},
                CODEC.encode(Tensor.of(new int[] {7, -1})));
        assertArrayEquals(new byte[] {1, 21, 5, 0, 0, 0, 'C', 'o', 'l', 'o', 'r', 4, 0, 0, 0, 'B', 'L', 'U', 'E'},
                CODEC.encode(Color.BLUE));
    }

    static Stream<Arguments> tensorCases() {
        List<int[]> shapes = List.of(new int[] {}, new int[] {0}, new int[] {2, 0, 3}, new int[] {5},
                new int[] {2, 3, 4});
        return Stream.of(DType.FLOAT32, DType.INT64, DType.BOOL, DType.FLOAT16, DType.FLOAT64, DType.INT32,
                DType.BFLOAT16).flatMap(d -> shapes.stream().map(s -> Arguments.of(d, s)));
    }

    @ParameterizedTest
    @MethodSource("tensorCases")
    void roundTripsTensorsOfEveryDtypeAndShape(DType dtype, int[] shape) {
        Tensor t = tensor(dtype, i -> dtype == DType.BOOL ? i % 2 : (i - 7) * 0.5, shape);
        Tensor back = (Tensor) roundTrip(t);
        assertSameTensor(t, back);
        assertFalse(back.requiresGrad());
    }

    @Test
    void writesNonContiguousTensorsRowMajorAndKeepsRequiresGrad() {
        Tensor t = Tensor.arange(0, 6, 1, DType.FLOAT32).view(2, 3).transpose(0, 1);
        assertFalse(t.isContiguous());
        Tensor back = (Tensor) roundTrip(t);
        assertSameTensor(t, back);
        assertTrue(back.isContiguous());

        Tensor leaf = Tensor.ones(2).requiresGrad(true);
        Tensor grad = (Tensor) roundTrip(leaf);
        assertTrue(grad.requiresGrad());
        assertNull(grad.gradFn(), "the graph does not travel");
    }

    @Test
    void roundTripsRecordsWithNestedRecordsEnumsAndTensors() {
        Drawing d = new Drawing("house", List.of(new Line(new Point(0, 0), new Point(3, 4), "wall"),
                new Line(new Point(-1, 2), new Point(5, 5), null)), Map.of("door", new Point(1, 0)), Color.GREEN,
                Tensor.of(new float[] {1, 2, 3, 4}, 2, 2), 0.5, null);
        Drawing back = CODEC.decode(CODEC.encode(d), Drawing.class);
        assertEquals(d.title(), back.title());
        assertEquals(d.lines(), back.lines());
        assertEquals(d.anchors(), back.anchors());
        assertSame(Color.GREEN, back.color());
        assertSameTensor(d.pixels(), back.pixels());
        assertEquals(0.5, back.scale());
        assertNull(back.origin());
        assertEquals(new Empty(), roundTrip(new Empty()));
        assertEquals(new Pair(new Point(1, 2), List.of(Color.RED)),
                roundTrip(new Pair(new Point(1, 2), List.of(Color.RED))));
    }

    @Test
    void standardCodecIsSharedAndAcceptsRepeatedIdenticalRegistration() {
        assertSame(ObjectCodec.standard(), ObjectCodec.standard());
        ObjectCodec.standard().register("test.ObjectCodecTest.Point", Point.class);
        ObjectCodec.standard().register("test.ObjectCodecTest.Point", Point.class);
        assertEquals(new Point(4, 5), ObjectCodec.standard().decode(ObjectCodec.standard().encode(new Point(4, 5))));
    }

    @Test
    void adaptedTypesTravelAsTheirPortableValue() {
        ObjectCodec codec = new ObjectCodec().register("Instant", Instant.class,
                i -> List.of(i.getEpochSecond(), i.getNano()),
                p -> Instant.ofEpochSecond((Long) ((List<?>) p).get(0), (Integer) ((List<?>) p).get(1)));
        Instant now = Instant.ofEpochSecond(1_700_000_000L, 123_456_789);
        assertEquals(List.of(now, now), codec.decode(codec.encode(List.of(now, now))));

        ObjectCodec picky = new ObjectCodec().register("Instant", Instant.class, i -> "x", p -> {
            throw new IllegalStateException("adapter refuses " + p);
        });
        CodecException e = assertCodecError(() -> picky.decode(codec.encode(now)), "adapter of 'Instant'",
                "adapter refuses");
        assertInstanceOf(IllegalStateException.class, e.getCause());
        ObjectCodec nullAdapter = new ObjectCodec().register("Instant", Instant.class, i -> "x", p -> (Instant) null);
        assertNull(nullAdapter.decode(codec.encode(now)));
    }

    @Test
    void decodeWithExpectedTypeChecksTheValue() {
        assertEquals(3, CODEC.decode(CODEC.encode(3), Integer.class));
        assertEquals(3, CODEC.decode(CODEC.encode(3), int.class));
        assertNull(CODEC.decode(CODEC.encode(null), String.class));
        assertCodecError(() -> CODEC.decode(CODEC.encode("three"), Integer.class), "expected a java.lang.Integer",
                "java.lang.String");
        assertCodecError(() -> CODEC.decode(CODEC.encode(null), int.class), "expected a int", "null");
    }

    // ---------------------------------------------------------------- encoding errors

    @Test
    void encodingAnUnsupportedOrUnregisteredTypeNamesTheClass() {
        assertEncodeError(new ArrayDeque<>(List.of(1)), "java.util.ArrayDeque", "supported:", "registered");
        assertEncodeError(List.of(Optional.empty()), "java.util.Optional", "supported:");
        assertEncodeError(new Object(), "java.lang.Object");
        assertEncodeError(new Positive(1), "record", Positive.class.getName(), "not registered", "register(");
        assertEncodeError(FewColors.RED, "enum", FewColors.class.getName(), "not registered");
        assertEncodeError(List.of(Map.of("k", new AnyInt(1))), AnyInt.class.getName(), "not registered");
    }

    @Test
    void encodingASelfContainingOrTooDeepValueFailsInsteadOfOverflowingTheStack() {
        List<Object> self = new ArrayList<>();
        self.add(self);
        assertEncodeError(self, "nests more than 64");
        assertEncodeError(nestedLists(65), "nests more than 64");
        assertEquals(nestedLists(64), roundTrip(nestedLists(64)));
    }

    @Test
    void encodingALoneSurrogateFails() {
        assertEncodeError("a\ud800b", "lone surrogate");
    }

    private static List<Object> nestedLists(int levels) {
        List<Object> v = new ArrayList<>(List.of("core"));
        for (int i = 1; i < levels; i++) {
            v = new ArrayList<>(List.of(v));
        }
        return v;
    }

    // ---------------------------------------------------------------- registration

    @Test
    void registrationRejectsConflictsAndClassesThatAreNeitherRecordsNorEnums() {
        ObjectCodec c = new ObjectCodec().register("P", Point.class);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.register("P", Line.class));
        assertTrue(e.getMessage().contains("already registered"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> c.register("Q", Point.class));
        assertTrue(e.getMessage().contains("already registered as 'P'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> c.register("S", String.class));
        assertTrue(e.getMessage().contains("neither a record nor an enum"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c.register("", Line.class));
        assertThrows(IllegalArgumentException.class, () -> c.register("x".repeat(257), Line.class));
    }

    // ---------------------------------------------------------------- decoding errors

    @Test
    void decodingAnUnregisteredRecordOrEnumNamesTheType() {
        byte[] point = CODEC.encode(List.of(new Point(1, 2)));
        assertCodecError(() -> new ObjectCodec().decode(point), "record type 'Point' is not registered",
                "registered: []");
        byte[] color = CODEC.encode(Color.RED);
        assertCodecError(() -> new ObjectCodec().register("Point", Point.class).decode(color),
                "enum type 'Color' is not registered", "registered: [Point]");
        assertCodecError(() -> new ObjectCodec().register("Point", Color.class).decode(point),
                "'Point' is registered as enum");
    }

    @Test
    void decodingChecksRecordComponentsAndRunsTheCanonicalConstructor() {
        ObjectCodec writer = new ObjectCodec().register("Value", AnyInt.class);
        ObjectCodec reader = new ObjectCodec().register("Value", Positive.class);
        assertEquals(new Positive(5), reader.decode(writer.encode(new AnyInt(5))));
        CodecException e = assertCodecError(() -> reader.decode(writer.encode(new AnyInt(-1))),
                "constructor of record 'Value'", "value must be > 0");
        assertInstanceOf(IllegalArgumentException.class, e.getCause());

        ObjectCodec strings = new ObjectCodec().register("Value", Named.class);
        assertCodecError(() -> reader.decode(strings.encode(new Named("x"))), "component 'value'",
                "declared int", "java.lang.String");
        assertCodecError(() -> reader.decode(strings.encode(new Named(null))), "declared int", "null");
        ObjectCodec pairs = new ObjectCodec().register("Value", Pair.class);
        assertCodecError(() -> reader.decode(pairs.encode(new Pair(1, 2))), "has 1 components but the bytes hold 2");
        ObjectCodec colors = new ObjectCodec().register("Color", Color.class);
        ObjectCodec few = new ObjectCodec().register("Color", FewColors.class);
        assertCodecError(() -> few.decode(colors.encode(Color.BLUE)), "no constant 'BLUE'", "constants are RED");
    }

    @Test
    void truncatedInputFailsAtEveryLength() {
        Drawing d = new Drawing("t", List.of(new Line(new Point(1, 2), new Point(3, 4), "l")),
                Map.of("a", new Point(0, 0)), Color.BLUE, Tensor.ones(3), 2.0, new Point(9, 9));
        byte[] full = CODEC.encode(List.of(d, "tail", new long[] {1, 2}, Set.of(1.5)));
        for (int n = 0; n < full.length; n++) {
            byte[] cut = Arrays.copyOf(full, n);
            String where = "length " + n;
            CodecException e = assertThrows(CodecException.class, () -> CODEC.decode(cut), where);
            assertTrue(e.getMessage().contains("truncated") || e.getMessage().contains("left"),
                    () -> where + ": " + e.getMessage());
        }
        assertCodecError(() -> CODEC.decode(new byte[0]), "truncated", "format version byte");
    }

    @Test
    void overlongLengthsFailBeforeAllocating() {
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 10).putInt(Integer.MAX_VALUE)
                .put((byte) 'x'))), "at byte 2", "string length 2147483647", "only 1 are left");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 15).putInt(1 << 29))),
                "double[] length 536870912", "4294967296");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 17).putInt(-5))),
                "list length -5 is negative");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 18).putInt(3).put((byte) 0)
                .put((byte) 0))), "map length 3 needs at least 6");
        assertCodecError(() -> CODEC.decode(tensorHeader(0, 0, 40000, 40000)), "tensor data of float32 [40000, 40000]",
                "6400000000 bytes");
        assertCodecError(() -> CODEC.decode(tensorHeader(0, 0, 65536, 65536, 65536)), "more than 2147483647 elements");
        assertCodecError(() -> CODEC.decode(tensorHeader(0, 0, 3, -1)), "dimension 1 is negative");
    }

    private static byte[] tensorHeader(int dtype, int flags, int... dims) {
        return bytes(b -> {
            b.put((byte) 1).put((byte) 16).put((byte) dtype).put((byte) flags).put((byte) dims.length);
            for (int d : dims) {
                b.putInt(d);
            }
        });
    }

    @Test
    void nestingIsLimitedTo64LevelsEvenForAMillionOpenLists() {
        assertCodecError(() -> CODEC.decode(openLists(65)), "nest more than 64");
        assertCodecError(() -> CODEC.decode(openLists(1_000_000)), "nest more than 64");
        assertEquals(nestedLists(64), CODEC.decode(CODEC.encode(nestedLists(64))));
    }

    /** {@code levels} lists of one element each, innermost holding an empty string. */
    private static byte[] openLists(int levels) {
        ByteBuffer b = ByteBuffer.allocate(1 + 5 * levels + 5).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1);
        for (int i = 0; i < levels; i++) {
            b.put((byte) 17).putInt(1);
        }
        return b.put((byte) 10).putInt(0).array();
    }

    @Test
    void rejectsUnknownTagsVersionsDtypesAndFlags() {
        assertCodecError(() -> CODEC.decode(new byte[] {1, 99}), "at byte 1", "unknown value tag 99", "0 to 22");
        assertCodecError(() -> CODEC.decode(new byte[] {1, 23}), "unknown value tag 23");
        assertCodecError(() -> CODEC.decode(new byte[] {2, 0}), "unsupported format version 2", "reads version 1");
        assertCodecError(() -> CODEC.decode(tensorHeader(9, 0)), "unknown tensor dtype code 9", "0=float32");
        assertCodecError(() -> CODEC.decode(tensorHeader(0, 6)), "unknown tensor flags 0x6");
        assertCodecError(() -> CODEC.decode(tensorHeader(5, 1)), "int64 tensor cannot require gradients");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 16).put((byte) 0).put((byte) 0)
                .put((byte) 65))), "tensor rank 65");
    }

    @Test
    void rejectsTrailingBytesBadUtf8BadBoolsAndDuplicates() {
        byte[] one = CODEC.encode(1);
        byte[] extra = Arrays.copyOf(one, one.length + 2);
        assertCodecError(() -> CODEC.decode(extra), "at byte 6", "2 bytes are left after the value");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 10).putInt(2)
                .put((byte) 0xc0).put((byte) 0x80))), "not valid UTF-8");
        byte[] bools = CODEC.encode(Tensor.of(new boolean[] {true, false, true}));
        bools[bools.length - 2] = 2;
        assertCodecError(() -> CODEC.decode(bools), "bool tensor element 1 is 2");
        byte[] s = "k".getBytes(StandardCharsets.UTF_8);
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 18).putInt(2)
                .put((byte) 10).putInt(1).put(s).put((byte) 0)
                .put((byte) 10).putInt(1).put(s).put((byte) 2))), "map key 1 repeats");
        assertCodecError(() -> CODEC.decode(bytes(b -> b.put((byte) 1).put((byte) 19).putInt(2)
                .put((byte) 5).putInt(7).put((byte) 5).putInt(7))), "set element 1 repeats");
    }

    @Test
    void randomMutationsOfValidEncodingsOnlyEverFailWithCodecException() {
        List<byte[]> seeds = List.of(
                CODEC.encode(new Drawing("d", List.of(new Line(new Point(1, 2), new Point(3, 4), "x")),
                        Map.of("a", new Point(5, 6)), Color.GREEN, Tensor.ones(DType.FLOAT16, 2, 2), 1.0, null)),
                CODEC.encode(List.of(Map.of("k", List.of(1, 2L, 3.0f)), Set.of("s"), new int[] {1, 2, 3},
                        Tensor.of(new boolean[] {true, false}), new double[] {1}, 'c', (short) 4, (byte) 5)),
                CODEC.encode(nestedLists(60)),
                CODEC.encode(new Pair(Tensor.arange(10), new Pair(Color.BLUE, new Empty()))));
        Random random = new Random(20240611);
        int decoded = 0;
        for (int iteration = 0; iteration < 100_000; iteration++) {
            byte[] input = mutate(seeds.get(random.nextInt(seeds.size())), random);
            try {
                CODEC.decode(input);
                decoded++;
            } catch (CodecException expected) {
                // the only failure allowed
            } catch (Throwable t) {
                fail("iteration " + iteration + " threw " + t + " for " + HexFormat.of().formatHex(input), t);
            }
        }
        assertTrue(decoded > 0, "some mutations (of element bytes) still decode");
    }

    private static byte[] mutate(byte[] seed, Random random) {
        byte[] b = seed.clone();
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits && b.length > 0; e++) {
            int at = random.nextInt(b.length);
            switch (random.nextInt(6)) {
                case 0 -> b[at] ^= (byte) (1 << random.nextInt(8));
                case 1 -> b[at] = (byte) random.nextInt(256);
                case 2 -> b = Arrays.copyOf(b, at);
                case 3 -> {
                    byte[] grown = new byte[b.length + 1];
                    System.arraycopy(b, 0, grown, 0, at);
                    grown[at] = (byte) random.nextInt(256);
                    System.arraycopy(b, at, grown, at + 1, b.length - at);
                    b = grown;
                }
                case 4 -> {
                    byte[] shrunk = new byte[b.length - 1];
                    System.arraycopy(b, 0, shrunk, 0, at);
                    System.arraycopy(b, at + 1, shrunk, at, b.length - at - 1);
                    b = shrunk;
                }
                default -> {
                    // a length field set to something large or negative
                    if (at + 4 <= b.length) {
                        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(at, random.nextInt());
                    }
                }
            }
        }
        return b;
    }
}
