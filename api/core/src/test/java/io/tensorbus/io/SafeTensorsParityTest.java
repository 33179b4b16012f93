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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reads safetensors files made from torch 1.13 tensors by {@code tools/make_io_fixtures.py} (laid out as the
 * reference library lays them out) and checks that tensorbus writes the same bytes. The expected values
 * are the formulas the script documents next to each file.
 */
class SafeTensorsParityTest {

    /** The tensors of state.safetensors, as the script builds them. */
    private static Map<String, Tensor> state() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        m.put("w.f32", tensor(DType.FLOAT32, i -> i, 2, 3));
        m.put("w.f64", tensor(DType.FLOAT64, i -> i * 0.25, 4));
        m.put("steps.i64", tensor(DType.INT64, i -> i - 2, 5));
        m.put("h.f16", tensor(DType.FLOAT16, i -> i / 2.0, 2, 2));
        m.put("b.bf16", tensor(DType.BFLOAT16, i -> i * 1.5, 4));
        return m;
    }

    private static Map<String, String> stateMetadata() {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", "pt");
        meta.put("producer", "tools/make_io_fixtures.py");
        return meta;
    }

    @Test
    void loadsAStateDictOfTorchTensors() throws IOException {
        Map<String, Tensor> m = SafeTensors.load(fixture("state.safetensors"));
        assertEquals(List.of("steps.i64", "w.f64", "w.f32", "b.bf16", "h.f16"), List.copyOf(m.keySet()));
        assertTensor(m.get("w.f32"), DType.FLOAT32, new int[] {2, 3}, i -> i);
        assertTensor(m.get("w.f64"), DType.FLOAT64, new int[] {4}, i -> i * 0.25);
        assertTensor(m.get("steps.i64"), DType.INT64, new int[] {5}, i -> i - 2);
        assertTensor(m.get("h.f16"), DType.FLOAT16, new int[] {2, 2}, i -> i / 2.0);
        assertTensor(m.get("b.bf16"), DType.BFLOAT16, new int[] {4}, i -> i * 1.5);
    }

    @Test
    void loadsTheSameTensorsMapped() throws IOException {
        Map<String, Tensor> m = SafeTensors.loadMapped(fixture("state.safetensors"));
        assertTensor(m.get("b.bf16"), DType.BFLOAT16, new int[] {4}, i -> i * 1.5);
        assertTensor(m.get("w.f64"), DType.FLOAT64, new int[] {4}, i -> i * 0.25);
    }

    @Test
    void readsMetadataWrittenWithTheFile() throws IOException {
        assertEquals(stateMetadata(), SafeTensors.metadata(fixture("state.safetensors")));
    }

    @Test
    void writesTheSameBytesAsTheReferenceLayout() throws IOException {
        byte[] expected = Files.readAllBytes(fixture("state.safetensors"));
        assertArrayEquals(expected, SafeTensors.toBytes(state(), stateMetadata()));
    }

    @Test
    void loadsOneTorchTensorOfEachDtype() throws IOException {
        Map<String, Tensor> m = SafeTensors.load(fixture("dtypes.safetensors"));
        assertTensor(m.get("f32"), DType.FLOAT32, new int[] {3}, i -> i + 0.5);
        assertTensor(m.get("f64"), DType.FLOAT64, new int[] {3}, i -> i / 8.0);
        assertTensor(m.get("f16"), DType.FLOAT16, new int[] {3}, i -> i - 1);
        assertTensor(m.get("bf16"), DType.BFLOAT16, new int[] {3}, i -> i * 2);
        assertTensor(m.get("i32"), DType.INT32, new int[] {3}, i -> i * 7);
        assertTensor(m.get("i64"), DType.INT64, new int[] {3}, i -> i - 5);
        assertTensor(m.get("bool"), DType.BOOL, new int[] {3}, i -> i != 1 ? 1 : 0);
        assertTensor(m.get("scalar"), DType.FLOAT64, new int[0], i -> 2.25);
        assertTensor(m.get("empty"), DType.FLOAT32, new int[] {0, 2}, i -> 0);
    }

    @Test
    void widensTorchInt8Uint8AndInt16ToInt32() throws IOException {
        Map<String, Tensor> m = SafeTensors.load(fixture("dtypes.safetensors"));
        assertTensor(m.get("u8"), DType.INT32, new int[] {3}, i -> i * 100);
        assertTensor(m.get("i8"), DType.INT32, new int[] {3}, i -> i - 100);
        assertTensor(m.get("i16"), DType.INT32, new int[] {3}, i -> i * 1000 - 2000);
        Map<String, Tensor> mapped = SafeTensors.loadMapped(fixture("dtypes.safetensors"));
        assertTensor(mapped.get("i16"), DType.INT32, new int[] {3}, i -> i * 1000 - 2000);
    }
}
