package io.tensorbus.distributed.algorithms;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The quantization hooks against PyTorch's own quantize / dequantize steps and observers
 * ({@code tools/make_quantization_data.py}, in {@code src/test/resources/commhooks}): bit for bit, per tensor and per
 * channel, at world sizes 2 and 3.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuantizationHookParityTest {

    private static List<JsonObject> cases(int world) throws Exception {
        try (InputStream in = QuantizationHookParityTest.class.getResourceAsStream("/commhooks/quantization.json")) {
            assertTrue(in != null, "missing quantization.json: run /usr/bin/python3 tools/make_quantization_data.py");
            JsonArray all = new JsonArray(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            return all.stream().map(o -> (JsonObject) o).filter(c -> c.getInteger("world") == world).toList();
        }
    }

    private static float[] floats(JsonArray values) {
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.getDouble(i).floatValue();
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void everyRankGetsPyTorchsAverageOfTheDequantizedBuckets(int world) throws Exception {
        List<JsonObject> cases = cases(world);
        assertTrue(cases.size() >= 9, "cases for world " + world);
        Distributed.spawn(world, pg -> {
            for (JsonObject c : cases) {
                int bucketSize = c.getInteger("bucket_size");
                CommHook hook = c.getString("hook").equals("pertensor") ? CommHooks.quantizationPerTensor()
                        : CommHooks.quantizationPerChannel(bucketSize);
                float[] mine = floats(c.getJsonArray("inputs").getJsonArray(pg.rank()));
                Tensor out = hook.apply(pg, PowerSGDTest.bucket(0, true, Tensor.of(mine))).toCompletionStage()
                        .toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertArrayEquals(floats(c.getJsonArray("output")), out.toFloatArray(), 0f,
                        c.getString("hook") + " " + bucketSize + " of " + mine.length + " on rank " + pg.rank());
            }
        });
    }

    @Test
    void aChannelMustHoldAnElement() {
        assertThrows(IllegalArgumentException.class, () -> CommHooks.quantizationPerChannel(0));
    }
}
