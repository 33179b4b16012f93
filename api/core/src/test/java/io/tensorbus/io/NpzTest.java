package io.tensorbus.io;

import static io.tensorbus.io.IoTesting.assertFormatError;
import static io.tensorbus.io.IoTesting.assertSameTensor;
import static io.tensorbus.io.IoTesting.assertTensor;
import static io.tensorbus.io.IoTesting.tensor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpzTest {
    @TempDir
    Path dir;

    private static Map<String, Tensor> stateDict() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("layer2.weight", tensor(DType.FLOAT32, i -> i * 0.25, 3, 2));
        m.put("layer1.bias", tensor(DType.FLOAT64, i -> -i, 4));
        m.put("half", tensor(DType.FLOAT16, i -> i / 2.0, 2, 2));
        m.put("index", tensor(DType.INT32, i -> i * 3, 5));
        m.put("steps", Tensor.scalar(11, DType.INT64));
        m.put("mask", tensor(DType.BOOL, i -> i % 2, 3));
        m.put("empty", Tensor.empty(DType.FLOAT32, 0, 4));
        m.put("transposed", tensor(DType.FLOAT32, i -> i, 2, 3).transpose(0, 1));
        return m;
    }

    @Test
    void roundTripsAStateDictInOrder() throws IOException {
        Map<String, Tensor> m = stateDict();
        Path file = dir.resolve("s.npz");
        Npz.write(file, m);
        Map<String, Tensor> back = Npz.read(file);
        assertEquals(List.copyOf(m.keySet()), List.copyOf(back.keySet()));
        m.forEach((k, v) -> assertSameTensor(v, back.get(k)));
    }

    @Test
    void writesStoredEntriesNamedAfterTheArrays() throws IOException {
        Path file = dir.resolve("s.npz");
        Npz.write(file, stateDict());
        try (ZipFile zip = new ZipFile(file.toFile())) {
            ZipEntry e = zip.getEntry("layer2.weight.npy");
            assertEquals(ZipEntry.STORED, e.getMethod());
            assertEquals(Npy.toBytes(stateDict().get("layer2.weight")).length, e.getSize());
        }
    }

    @Test
    void roundTripsCompressedArchives() throws IOException {
        Map<String, Tensor> m = stateDict();
        Path file = dir.resolve("c.npz");
        Npz.writeCompressed(file, m);
        try (ZipFile zip = new ZipFile(file.toFile())) {
            assertEquals(ZipEntry.DEFLATED, zip.getEntry("index.npy").getMethod());
        }
        Map<String, Tensor> back = Npz.read(file);
        m.forEach((k, v) -> assertSameTensor(v, back.get(k)));
    }

    @Test
    void roundTripsAnEmptyArchive() throws IOException {
        Path file = dir.resolve("none.npz");
        Npz.write(file, Map.of());
        assertTrue(Npz.read(file).isEmpty());
    }

    @Test
    void refusesBfloat16AndEmptyNames() {
        assertThrows(IllegalArgumentException.class,
                () -> Npz.write(dir.resolve("x.npz"), Map.of("b", Tensor.empty(DType.BFLOAT16, 1))));
        assertThrows(IllegalArgumentException.class,
                () -> Npz.write(dir.resolve("x.npz"), Map.of("", Tensor.empty(DType.FLOAT32, 1))));
    }

    // ---------------------------------------------------------------- bad input, one problem each

    @Test
    void rejectsAFileThatIsNotAZip() throws IOException {
        Path file = dir.resolve("plain.npz");
        Files.write(file, Npy.toBytes(tensor(DType.FLOAT32, i -> i, 3)));
        assertFormatError(() -> Npz.read(file), "plain.npz: not a valid zip archive");
    }

    @Test
    void rejectsATruncatedArchive() throws IOException {
        Path file = dir.resolve("cut.npz");
        Npz.write(file, stateDict());
        byte[] all = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(all, all.length / 2));
        assertFormatError(() -> Npz.read(file), "cut.npz: not a valid zip archive");
    }

    @Test
    void rejectsAnEntryThatIsNotNpy() throws IOException {
        Path file = dir.resolve("extra.npz");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            zip.putNextEntry(new ZipEntry("a.npy"));
            zip.write(Npy.toBytes(tensor(DType.FLOAT32, i -> i, 2)));
            zip.putNextEntry(new ZipEntry("notes.txt"));
            zip.write("hello".getBytes());
        }
        assertFormatError(() -> Npz.read(file), "extra.npz: entry 'notes.txt' is not a .npy array");
    }

    @Test
    void rejectsAMalformedArrayNamingTheEntry() throws IOException {
        Path file = dir.resolve("bad.npz");
        byte[] npy = Npy.toBytes(tensor(DType.FLOAT64, i -> i, 4));
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry("w.npy"));
            zip.write(npy, 0, npy.length - 8);
        }
        assertFormatError(() -> Npz.read(file), "bad.npz entry w.npy: truncated");
    }

    @Test
    void readsArraysWrittenByThisWriterWithNumpyNames() throws IOException {
        Path file = dir.resolve("n.npz");
        Npz.write(file, Map.of("x", tensor(DType.INT64, i -> i, 3)));
        assertTensor(Npz.read(file).get("x"), DType.INT64, new int[] {3}, i -> i);
    }
}
