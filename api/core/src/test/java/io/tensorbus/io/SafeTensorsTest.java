package io.tensorbus.io;

import io.tensorbus.DType;
import io.tensorbus.internal.io.Json;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.tensorbus.io.IoTesting.assertFormatError;
import static io.tensorbus.io.IoTesting.assertSameTensor;
import static io.tensorbus.io.IoTesting.assertTensor;
import static io.tensorbus.io.IoTesting.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SafeTensorsTest {
    @TempDir
    Path dir;

    private static Tensor sample(DType dtype, int... shape) {
        return tensor(dtype, i -> dtype == DType.BOOL ? (i % 3 == 0 ? 1 : 0) : (i - 4) * 0.5, shape);
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void roundTripsEveryDtypeThroughAFile(DType dtype) throws IOException {
        Tensor t = sample(dtype, 3, 4);
        Path file = dir.resolve("t.safetensors");
        SafeTensors.save(file, Map.of("t", t));
        assertSameTensor(t, SafeTensors.load(file).get("t"));
        assertSameTensor(t, SafeTensors.loadMapped(file).get("t"));
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void roundTripsEveryDtypeThroughBytes(DType dtype) throws IOException {
        Tensor t = sample(dtype, 2, 1, 3);
        assertSameTensor(t, SafeTensors.load(SafeTensors.toBytes(Map.of("t", t), null)).get("t"));
    }

    @Test
    void roundTripsZeroDimensionalEmptyAndNonContiguousTensors() throws IOException {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("scalar", Tensor.scalar(-1.25, DType.FLOAT32));
        m.put("empty", Tensor.empty(DType.INT64, 0, 3));
        m.put("empty.bf16", Tensor.empty(DType.BFLOAT16, 2, 0));
        m.put("transposed", sample(DType.FLOAT64, 2, 3).transpose(0, 1));
        m.put("half.transposed", sample(DType.FLOAT16, 3, 2).transpose(0, 1));
        Map<String, Tensor> back = SafeTensors.load(SafeTensors.toBytes(m, null));
        assertEquals(m.keySet(), back.keySet());
        m.forEach((k, v) -> assertSameTensor(v, back.get(k)));
        assertEquals(0, back.get("scalar").dim());
    }

    @Test
    void roundTripsMetadata() throws IOException {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", "pt");
        meta.put("note", "quotes \" and unicode é ✓");
        Path file = dir.resolve("m.safetensors");
        SafeTensors.save(file, Map.of("a", sample(DType.FLOAT32, 2)), meta);
        assertEquals(meta, SafeTensors.metadata(file));
    }

    @Test
    void metadataIsEmptyWhenTheFileHasNone() throws IOException {
        Path file = dir.resolve("n.safetensors");
        SafeTensors.save(file, Map.of("a", sample(DType.FLOAT32, 2)));
        assertEquals(Map.of(), SafeTensors.metadata(file));
        assertFalse(new String(Files.readAllBytes(file), StandardCharsets.UTF_8).contains("__metadata__"));
    }

    @Test
    void writesTheSameBytesAsTheReferenceLibraryForOneTensor() {
        // The cases of the reference library's test_serialization and test_serialization_forced_alignement:
        // a 64-byte header needs no padding, a 65-byte one gets 7 spaces.
        assertReferenceBytes("attn.0", new int[] {1, 2, 3}, 64);
        assertReferenceBytes("attn0", new int[] {1, 1, 2, 3}, 72);
    }

    private static void assertReferenceBytes(String name, int[] shape, int headerLength) {
        String dims = Arrays.toString(shape).replace(" ", "");
        String json = "{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":" + dims + ",\"data_offsets\":[0,24]}}";
        ByteBuffer expected = ByteBuffer.allocate(8 + headerLength + 24).order(ByteOrder.LITTLE_ENDIAN);
        expected.putLong(headerLength).put(json.getBytes(StandardCharsets.UTF_8));
        expected.put(" ".repeat(headerLength - json.length()).getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < 6; i++) {
            expected.putFloat(i);
        }
        byte[] actual = SafeTensors.toBytes(Map.of(name, tensor(DType.FLOAT32, i -> i, shape)), null);
        assertArrayEquals(expected.array(), actual);
    }

    @Test
    void loadMappedHandlesAFileWithNoData() throws IOException {
        Path file = dir.resolve("nodata.safetensors");
        SafeTensors.save(file, Map.of("e", Tensor.empty(DType.FLOAT32, 0)));
        assertArrayEquals(new int[] {0}, SafeTensors.loadMapped(file).get("e").shape());
    }

    @Test
    void writesAnEmptyFileAsTheReferenceLibraryDoes() {
        byte[] expected = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
        assertArrayEquals(expected, SafeTensors.toBytes(Map.of(), null));
    }

    @Test
    void ordersTensorsByDecreasingAlignmentThenNameSoEveryTensorIsAligned() throws IOException {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("b", sample(DType.BOOL, 3));
        m.put("h", sample(DType.FLOAT16, 3));
        m.put("z", sample(DType.INT64, 1));
        m.put("f", sample(DType.FLOAT32, 3));
        m.put("a", sample(DType.INT64, 2));
        m.put("d", sample(DType.FLOAT64, 1));
        byte[] bytes = SafeTensors.toBytes(m, null);
        long n = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(0, n % 8);
        Map<?, ?> header = (Map<?, ?>) Json.parse(new String(bytes, 8, (int) n, StandardCharsets.UTF_8), "h");
        assertEquals(List.of("a", "z", "d", "f", "h", "b"), List.copyOf(header.keySet()));
        assertEquals(List.of("a", "z", "d", "f", "h", "b"), List.copyOf(SafeTensors.load(bytes).keySet()));
        for (Object info : header.values()) {
            long begin = (Long) ((List<?>) ((Map<?, ?>) info).get("data_offsets")).get(0);
            DType t = DType.fromSafetensors((String) ((Map<?, ?>) info).get("dtype"));
            assertEquals(0, (8 + n + begin) % t.byteSize(), () -> "alignment of " + info);
        }
    }

    @Test
    void loadMappedReturnsReadOnlyViewsOfTheFile() throws IOException {
        Path file = dir.resolve("map.safetensors");
        SafeTensors.save(file, Map.of("w", sample(DType.FLOAT32, 4, 4)));
        Tensor w = SafeTensors.loadMapped(file).get("w");
        assertTrue(TensorInternals.storage(w).segment().isMapped());
        assertTrue(TensorInternals.storage(w).segment().isReadOnly());
        assertSameTensor(sample(DType.FLOAT32, 4, 4), w);
        assertThrows(RuntimeException.class, () -> w.set(1.0, 0, 0));
    }

    @Test
    void loadMappedCopiesTensorsThatAreNotAligned() throws IOException {
        // A BOOL tensor of 1 byte first pushes the F32 tensor to an odd offset (valid, if unusual).
        String json = "{\"b\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]},"
                + "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]}}";
        ByteBuffer data = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) 1).putFloat(1.5f).putFloat(-2f);
        Path file = dir.resolve("odd.safetensors");
        Files.write(file, file(json, data.array()));
        Map<String, Tensor> m = SafeTensors.loadMapped(file);
        assertTensor(m.get("f"), DType.FLOAT32, new int[] {2}, i -> i == 0 ? 1.5 : -2);
        assertTensor(m.get("b"), DType.BOOL, new int[] {1}, i -> 1);
        assertFalse(TensorInternals.storage(m.get("f")).segment().isMapped());
    }

    @Test
    void loadedTensorsAreWritableAndIndependentOfTheFile() throws IOException {
        Path file = dir.resolve("own.safetensors");
        SafeTensors.save(file, Map.of("w", sample(DType.FLOAT64, 3)));
        Tensor w = SafeTensors.load(file).get("w");
        Files.delete(file);
        w.set(7.0, 1);
        assertEquals(7.0, w.getDouble(1));
    }

    @Test
    void refusesReservedOrNullNames() {
        Tensor t = sample(DType.FLOAT32, 1);
        assertThrows(IllegalArgumentException.class, () -> SafeTensors.toBytes(Map.of("__metadata__", t), null));
        Map<String, Tensor> withNull = new LinkedHashMap<>();
        withNull.put("x", null);
        assertThrows(IllegalArgumentException.class, () -> SafeTensors.toBytes(withNull, null));
    }

    // ---------------------------------------------------------------- bad input, one problem each

    @Test
    void rejectsAFileShorterThanTheLengthField() throws IOException {
        Path file = dir.resolve("tiny.safetensors");
        Files.write(file, new byte[] {1, 2, 3});
        assertFormatError(() -> SafeTensors.load(file), "tiny.safetensors: truncated: the 8-byte header length");
    }

    @Test
    void rejectsAHeaderLengthAboveTheLimit() {
        byte[] b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(200_000_000L).array();
        assertFormatError(() -> SafeTensors.load(b), "header length 200000000 exceeds the limit of 100000000 bytes");
        byte[] huge = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(-1L).array();
        assertFormatError(() -> SafeTensors.load(huge), "header length 18446744073709551615 exceeds the limit");
    }

    @Test
    void rejectsAHeaderLengthBeyondTheFile() throws IOException {
        Path file = dir.resolve("long.safetensors");
        byte[] good = SafeTensors.toBytes(Map.of("a", sample(DType.FLOAT32, 2)), null);
        ByteBuffer.wrap(good).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1000);
        Files.write(file, good);
        assertFormatError(() -> SafeTensors.load(file), "long.safetensors: header length 1000 exceeds the "
                + (good.length - 8) + " bytes that follow the length field");
    }

    @Test
    void rejectsATruncatedFile() throws IOException {
        Path file = dir.resolve("cut.safetensors");
        byte[] good = SafeTensors.toBytes(Map.of("a", sample(DType.FLOAT32, 4)), null);
        Files.write(file, Arrays.copyOf(good, good.length - 4));
        assertFormatError(() -> SafeTensors.load(file), "cut.safetensors: tensor \"a\": data_offsets [0, 16] are out"
                + " of range: the data buffer after the header holds 12 bytes");
    }

    @Test
    void rejectsInvalidJson() {
        assertFormatError(() -> SafeTensors.load(file("{\"a\": {\"dtype\": \"F32\",", new byte[0])),
                "<safetensors bytes>: invalid JSON at offset");
    }

    @Test
    void rejectsAHeaderThatIsNotAnObject() {
        assertFormatError(() -> SafeTensors.load(file("[1, 2]", new byte[0])), "the header must be a JSON object");
    }

    @Test
    void rejectsInvalidUtf8() {
        byte[] b = file("{\"x\":1}", new byte[0]);
        b[10] = (byte) 0xc3;
        assertFormatError(() -> SafeTensors.load(b), "the header is not valid UTF-8");
    }

    @Test
    void rejectsAnUnknownDtype() {
        String json = "{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[8])),
                "tensor \"a\": unsupported dtype 'C64'; supported: F32, F64, F16, BF16, I32, I64, BOOL");
    }

    @Test
    void rejectsOffsetsOutOfRange() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[4])), "tensor \"a\": data_offsets [0, 8] are out"
                + " of range");
    }

    @Test
    void rejectsOverlappingOffsets() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[12])), "tensor \"b\": data_offsets [4, 12]"
                + " overlap the previous tensor");
    }

    @Test
    void rejectsAGapBetweenTensors() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[12])), "tensor \"b\": data_offsets [8, 12]"
                + " leave a gap");
    }

    @Test
    void rejectsOffsetsThatDoNotCoverTheBuffer() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[12])), "holds 12 bytes but the tensors'"
                + " data_offsets cover only 4");
    }

    @Test
    void rejectsAShapeThatDoesNotMatchTheByteLength() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[8])),
                "tensor \"a\": shape [3] of F32 needs 12 bytes but data_offsets [0, 8] span 8");
    }

    @Test
    void rejectsOffsetsThatEndBeforeTheyBegin() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[4])), "end before they begin");
    }

    @Test
    void rejectsDuplicateTensorNames() {
        String json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[8])), "duplicate member name \"a\"");
    }

    @Test
    void rejectsMalformedTensorInfo() {
        assertFormatError(() -> SafeTensors.load(file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", new byte[4])),
                "tensor \"a\": expected an object with exactly the members dtype, shape and data_offsets");
        assertFormatError(() ->
                SafeTensors.load(file("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}",
                new byte[4])), "shape must hold non-negative integers");
        assertFormatError(() ->
                SafeTensors.load(file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}",
                new byte[4])), "shape must hold non-negative integers");
        assertFormatError(() -> SafeTensors.load(file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}",
                new byte[4])), "data_offsets must be an array of 2 non-negative integers");
    }

    @Test
    void rejectsMetadataThatIsNotStringToString() {
        String json = "{\"__metadata__\":{\"epoch\":3}}";
        assertFormatError(() -> SafeTensors.load(file(json, new byte[0])), "__metadata__ value of \"epoch\" must be a"
                + " string, got 3");
    }

    /** A safetensors image with a hand-written header (padded with spaces to 8 bytes) and data. */
    static byte[] file(String json, byte[] data) {
        byte[] j = json.getBytes(StandardCharsets.UTF_8);
        int n = (j.length + 7) / 8 * 8;
        ByteBuffer b = ByteBuffer.allocate(8 + n + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(n).put(j);
        while (b.position() < 8 + n) {
            b.put((byte) ' ');
        }
        return b.put(data).array();
    }
}
