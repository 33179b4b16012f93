package io.tensorbus.io;

import static io.tensorbus.io.IoTesting.assertTensor;
import static io.tensorbus.io.IoTesting.fixture;
import static io.tensorbus.io.IoTesting.tensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads files written by NumPy 1.24 ({@code tools/make_io_fixtures.py}) and checks that tensorbus writes the
 * same bytes. The expected values are the formulas the script documents next to each file.
 */
class NumpyParityTest {
    @TempDir
    Path dir;

    @Test
    void readsFloat32NpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("f32_3x4.npy")), DType.FLOAT32, new int[] {3, 4}, i -> i);
    }

    @Test
    void readsFloat64NpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("f64_2x3.npy")), DType.FLOAT64, new int[] {2, 3}, i -> i * 0.5);
    }

    @Test
    void readsInt64AndInt32NpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("i64_5.npy")), DType.INT64, new int[] {5}, i -> i - 2);
        assertTensor(Npy.read(fixture("i32_2x2.npy")), DType.INT32, new int[] {2, 2}, i -> i * 1000);
    }

    @Test
    void readsBoolNpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("bool_2x3.npy")), DType.BOOL, new int[] {2, 3}, i -> i % 3 == 0 ? 1 : 0);
    }

    @Test
    void readsFloat16NpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("f16_4.npy")), DType.FLOAT16, new int[] {4}, i -> i / 4.0);
    }

    @Test
    void readsFortranOrderNpyWrittenByNumpy() throws IOException {
        Tensor t = Npy.read(fixture("f64_2x3x4_fortran.npy"));
        assertTensor(t, DType.FLOAT64, new int[] {2, 3, 4}, i -> i);
        assertEquals(true, t.isContiguous());
    }

    @Test
    void readsBigEndianNpyWrittenByNumpy() throws IOException {
        assertTensor(Npy.read(fixture("f64_2x3_bigendian.npy")), DType.FLOAT64, new int[] {2, 3}, i -> i * 0.5);
        assertTensor(Npy.read(fixture("i32_4_bigendian.npy")), DType.INT32, new int[] {4}, i -> i - 1);
    }

    @Test
    void readsUint8NpyWrittenByNumpyAsInt32() throws IOException {
        assertTensor(Npy.read(fixture("u1_6.npy")), DType.INT32, new int[] {6}, i -> i * 50);
    }

    @Test
    void readsZeroDimensionalNpyWrittenByNumpy() throws IOException {
        Tensor t = Npy.read(fixture("f64_scalar.npy"));
        assertArrayEquals(new int[0], t.shape());
        assertEquals(3.5, t.item());
    }

    @Test
    void readsEmptyNpyWrittenByNumpy() throws IOException {
        Tensor t = Npy.read(fixture("f32_0x3.npy"));
        assertArrayEquals(new int[] {0, 3}, t.shape());
        assertEquals(DType.FLOAT32, t.dtype());
    }

    @Test
    void writesTheSameBytesAsNumpySave() throws IOException {
        record Case(String file, Tensor tensor) {
        }
        List<Case> cases = List.of(
                new Case("f32_3x4.npy", tensor(DType.FLOAT32, i -> i, 3, 4)),
                new Case("f64_2x3.npy", tensor(DType.FLOAT64, i -> i * 0.5, 2, 3)),
                new Case("i64_5.npy", tensor(DType.INT64, i -> i - 2, 5)),
                new Case("i32_2x2.npy", tensor(DType.INT32, i -> i * 1000, 2, 2)),
                new Case("bool_2x3.npy", tensor(DType.BOOL, i -> i % 3 == 0 ? 1 : 0, 2, 3)),
                new Case("f16_4.npy", tensor(DType.FLOAT16, i -> i / 4.0, 4)),
                new Case("f64_scalar.npy", Tensor.scalar(3.5, DType.FLOAT64)),
                new Case("f32_0x3.npy", Tensor.empty(DType.FLOAT32, 0, 3)));
        for (Case c : cases) {
            assertArrayEquals(Files.readAllBytes(fixture(c.file)), Npy.toBytes(c.tensor), c.file);
        }
    }

    @Test
    void writesFortranOrderInputAsTheSameBytesAsNumpyWritesTheCOrderArray() throws IOException {
        Tensor t = Npy.read(fixture("f64_2x3x4_fortran.npy"));
        Path file = dir.resolve("c.npy");
        Npy.write(file, t);
        byte[] expected = Npy.toBytes(tensor(DType.FLOAT64, i -> i, 2, 3, 4));
        assertArrayEquals(expected, Files.readAllBytes(file));
    }

    @Test
    void readsNpzWrittenByNumpySavez() throws IOException {
        assertState(Npz.read(fixture("state.npz")));
    }

    @Test
    void readsNpzWrittenByNumpySavezCompressed() throws IOException {
        assertState(Npz.read(fixture("state_compressed.npz")));
    }

    /** weight f32 [2,3] = arange(6); bias f64 [3] = arange(3)*0.5; step i64 0-d = 7; mask bool [4] = i%2==1. */
    static void assertState(Map<String, Tensor> m) {
        assertEquals(List.of("weight", "bias", "step", "mask"), List.copyOf(m.keySet()));
        assertTensor(m.get("weight"), DType.FLOAT32, new int[] {2, 3}, i -> i);
        assertTensor(m.get("bias"), DType.FLOAT64, new int[] {3}, i -> i * 0.5);
        assertTensor(m.get("step"), DType.INT64, new int[0], i -> 7);
        assertTensor(m.get("mask"), DType.BOOL, new int[] {4}, i -> i % 2);
    }
}
