package io.tensorbus.io;

import static io.tensorbus.io.IoTesting.assertFormatError;
import static io.tensorbus.io.IoTesting.assertSameTensor;
import static io.tensorbus.io.IoTesting.assertTensor;
import static io.tensorbus.io.IoTesting.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.io.impl.ByteInput;
import io.tensorbus.io.impl.NpyHeader;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class NpyTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = DType.class, names = "BFLOAT16", mode = EnumSource.Mode.EXCLUDE)
    void roundTripsEveryNumpyDtypeThroughAFile(DType dtype) throws IOException {
        Tensor t = tensor(dtype, i -> dtype == DType.BOOL ? i % 2 : i - 3, 2, 3, 4);
        Path file = dir.resolve("t.npy");
        Npy.write(file, t);
        assertSameTensor(t, Npy.read(file));
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = "BFLOAT16", mode = EnumSource.Mode.EXCLUDE)
    void roundTripsEveryNumpyDtypeThroughBytes(DType dtype) throws IOException {
        Tensor t = tensor(dtype, i -> i % 2, 5);
        assertSameTensor(t, Npy.read(Npy.toBytes(t)));
    }

    @Test
    void roundTripsAZeroDimensionalTensor() throws IOException {
        Tensor t = Tensor.scalar(2.5, DType.FLOAT64);
        Tensor back = Npy.read(Npy.toBytes(t));
        assertEquals(0, back.dim());
        assertEquals(2.5, back.item());
    }

    @Test
    void roundTripsEmptyTensors() throws IOException {
        for (int[] shape : new int[][] {{0}, {0, 3}, {2, 0, 5}}) {
            Tensor back = Npy.read(Npy.toBytes(Tensor.empty(DType.FLOAT32, shape)));
            assertArrayEquals(shape, back.shape());
            assertEquals(0, back.numel());
        }
    }

    @Test
    void writesNonContiguousTensorsInLogicalOrder() throws IOException {
        Tensor base = tensor(DType.FLOAT32, i -> i, 3, 4);
        Tensor transposed = base.transpose(0, 1);
        assertFalse(transposed.isContiguous());
        Tensor back = Npy.read(Npy.toBytes(transposed));
        assertTensor(back, DType.FLOAT32, new int[] {4, 3}, i -> (i % 3) * 4 + i / 3);
    }

    @Test
    void readTensorsAreWritable() throws IOException {
        Tensor back = Npy.read(Npy.toBytes(tensor(DType.FLOAT32, i -> i, 4)));
        back.set(9.0, 0);
        assertEquals(9.0, back.getDouble(0));
    }

    @Test
    void refusesToWriteBfloat16() {
        Tensor t = Tensor.empty(DType.BFLOAT16, 2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Npy.toBytes(t));
        assertTrue(e.getMessage().contains("bfloat16"), e.getMessage());
    }

    @Test
    void readsArraysWrittenOneAfterAnotherFromAStream() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Npy.write(out, tensor(DType.INT64, i -> i, 3));
        Npy.write(out, tensor(DType.FLOAT64, i -> -i, 2, 2));
        ByteArrayInputStream in = new ByteArrayInputStream(out.toByteArray());
        assertTensor(Npy.read(in), DType.INT64, new int[] {3}, i -> i);
        assertTensor(Npy.read(in), DType.FLOAT64, new int[] {2, 2}, i -> -i);
        assertEquals(-1, in.read());
    }

    @Test
    void writeReplacesAnExistingFile() throws IOException {
        Path file = dir.resolve("w.npy");
        Files.writeString(file, "old content that is longer than nothing");
        Npy.write(file, tensor(DType.INT32, i -> i, 2));
        assertTensor(Npy.read(file), DType.INT32, new int[] {2}, i -> i);
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file is left behind");
        }
    }

    @Test
    void headerIsPaddedSoDataStartsAt64ByteBoundary() {
        for (int[] shape : new int[][] {{}, {1}, {7, 9, 11}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 0}}) {
            byte[] b = Npy.toBytes(Tensor.empty(DType.FLOAT32, shape));
            int headerLen = (b[8] & 0xff) | (b[9] & 0xff) << 8;
            assertEquals(0, (10 + headerLen) % 64);
            assertEquals('\n', b[10 + headerLen - 1]);
        }
    }

    @Test
    void writesVersion2WhenTheHeaderExceeds65535Bytes() throws IOException {
        int[] shape = new int[30_000];
        Arrays.fill(shape, 1);
        byte[] header = NpyHeader.encode("<f4", shape);
        assertEquals(2, header[6]);
        int len = ByteBuffer.wrap(header, 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        assertEquals(header.length, 12 + len);
        assertEquals(0, header.length % 64);
        NpyHeader back = NpyHeader.read(ByteInput.of(header, "h"));
        assertArrayEquals(shape, back.shape());
    }

    @Test
    void readsVersion2And3Headers() throws IOException {
        for (int version : new int[] {2, 3}) {
            String dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
            byte[] bytes = npy(version, dict, le(new int[] {7, -8}));
            assertTensor(Npy.read(bytes), DType.INT32, new int[] {2}, i -> i == 0 ? 7 : -8);
        }
    }

    @Test
    void readsHeadersWithDoubleQuotesAndPython2Longs() throws IOException {
        byte[] bytes = npy(1, "{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<i4\"}",
                le(new int[] {1, 2}));
        assertTensor(Npy.read(bytes), DType.INT32, new int[] {1, 2}, i -> i + 1);
    }

    @Test
    void readsFortranOrderHeaderWrittenByHand() throws IOException {
        // column-major [[1, 2, 3], [4, 5, 6]] is 1 4 2 5 3 6
        byte[] bytes = npy(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                le(new int[] {1, 4, 2, 5, 3, 6}));
        assertTensor(Npy.read(bytes), DType.INT32, new int[] {2, 3}, i -> i + 1);
    }

    // ---------------------------------------------------------------- bad input, one problem each

    @Test
    void rejectsATruncatedFile() throws IOException {
        byte[] good = Npy.toBytes(tensor(DType.FLOAT32, i -> i, 4));
        Path file = dir.resolve("cut.npy");
        Files.write(file, Arrays.copyOf(good, 20));
        assertFormatError(() -> Npy.read(file), file.toString(), "truncated", ".npy header");
    }

    @Test
    void rejectsAnEmptyFile() throws IOException {
        Path file = dir.resolve("empty.npy");
        Files.write(file, new byte[0]);
        assertFormatError(() -> Npy.read(file), "empty.npy", "truncated", "magic");
    }

    @Test
    void rejectsABadMagic() throws IOException {
        Path file = dir.resolve("bad.npy");
        Files.write(file, "PK\3\4 this is a zip, not an npy file".getBytes(StandardCharsets.ISO_8859_1));
        assertFormatError(() -> Npy.read(file), "bad.npy: not a .npy file: bad magic 50 4b 03 04", "\\x93NUMPY");
    }

    @Test
    void rejectsAnUnknownVersion() {
        byte[] b = Npy.toBytes(tensor(DType.FLOAT32, i -> i, 1));
        b[6] = 4;
        assertFormatError(() -> Npy.read(b), "unsupported .npy version 4.0; supported: 1.0, 2.0, 3.0");
    }

    @Test
    void rejectsABadHeaderDict() {
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", new byte[8])),
                "bad .npy header dict", "expected ','");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'shape': (2,), }", new byte[8])),
                "keys [descr, shape]", "exactly 'descr', 'fortran_order' and 'shape'");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", new byte[8])),
                "'fortran_order' must be True or False");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
                new byte[8])),
                "one-element tuple needs a trailing comma");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                new byte[8])),
                "negative");
        assertFormatError(() -> Npy.read(npy(1,
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                new byte[8])), "duplicate key 'descr'");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x",
                new byte[8])),
                "unexpected text after the header dict");
    }

    @Test
    void rejectsAnUnsupportedDescr() {
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                new byte[8])),
                "<npy bytes>: unsupported descr '<c8'; supported: <f2, <f4, <f8, <i4, <i8, |b1");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
                new byte[8])),
                "unsupported descr '|O'");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }",
                new byte[8])),
                "unsupported descr '<u8'");
        assertFormatError(() -> Npy.read(npy(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }",
                new byte[4])),
                "unsupported descr '|f4'");
    }

    @Test
    void rejectsAStructuredDtype() {
        String dict = "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (1,), }";
        assertFormatError(() -> Npy.read(npy(1, dict, new byte[8])), "structured dtypes are not supported");
    }

    @Test
    void rejectsDataShorterThanTheShape() throws IOException {
        Path file = dir.resolve("short.npy");
        Files.write(file, npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", new byte[40]));
        assertFormatError(() -> Npy.read(file), "short.npy: truncated: data for shape [3, 4] of <f8 needs 96 bytes"
                + " but only 40 remain");
    }

    @Test
    void rejectsBytesAfterTheData() {
        byte[] good = Npy.toBytes(tensor(DType.FLOAT32, i -> i, 2));
        byte[] longer = Arrays.copyOf(good, good.length + 3);
        assertFormatError(() -> Npy.read(longer), "3 unexpected bytes after the data");
    }

    @Test
    void rejectsAShapeTooLargeForATensor() {
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536), }";
        assertFormatError(() -> Npy.read(npy(1, dict, new byte[0])), "more than 2147483647 elements");
    }

    @Test
    void rejectsInvalidUtf8InAVersion3Header() {
        byte[] b = npy(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new byte[4]);
        b[12] = (byte) 0xff;
        assertFormatError(() -> Npy.read(b), "not valid UTF-8");
    }

    @Test
    void truncatedStreamNamesTheStream() {
        byte[] good = Npy.toBytes(tensor(DType.FLOAT64, i -> i, 8));
        ByteArrayInputStream in = new ByteArrayInputStream(Arrays.copyOf(good, good.length - 1));
        assertFormatError(() -> Npy.read(in), "<npy stream>: truncated: tensor data needs 64 bytes but only 63 remain");
    }

    // ---------------------------------------------------------------- helpers

    /** A .npy image with a hand-written header dict (padded as NumPy pads) and raw data. */
    static byte[] npy(int version, String dict, byte[] data) {
        int lenSize = version == 1 ? 2 : 4;
        StringBuilder h = new StringBuilder(dict);
        while ((6 + 2 + lenSize + h.length() + 1) % 64 != 0) {
            h.append(' ');
        }
        h.append('\n');
        byte[] header = h.toString().getBytes(version == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.allocate(8 + lenSize + header.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) version, 0});
        if (version == 1) {
            b.putShort((short) header.length);
        } else {
            b.putInt(header.length);
        }
        return b.put(header).put(data).array();
    }

    static byte[] le(int[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return b.array();
    }
}
