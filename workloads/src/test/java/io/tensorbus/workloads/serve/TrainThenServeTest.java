package io.tensorbus.workloads.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The train-then-serve example end to end: 200 real test-set images POSTed as 8-bit pixels are classified by the
 * serving worker as the trainers' own network classifies them, and the scrape holds training's and serving's meters.
 */
class TrainThenServeTest {
    private static final int IMAGES = 200;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void postedTestImagesGetTheTrainedNetworksPredictions() throws Exception {
        FashionMnistTraining.Options one = new FashionMnistTraining.Options(1, null, 1234, 128, 0.01, 0.5, 0);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (TrainThenServe serving = TrainThenServe.start(one, 2, "127.0.0.1", 0,
                new PrintStream(log, true, StandardCharsets.UTF_8))) {
            FashionMnist raw = FashionMnist.embedded(false, FashionMnist.Normalization.NONE);
            FashionMnist normalized = FashionMnist.embedded(false);
            byte[] pixels = new byte[IMAGES * 784];
            float[] values = raw.images().narrow(0, 0, IMAGES).contiguous().toFloatArray();
            for (int i = 0; i < pixels.length; i++) {
                pixels[i] = (byte) Math.round(values[i] * 255);
            }
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serving.port()
                    + "/classify")).POST(HttpRequest.BodyPublishers.ofByteArray(pixels))
                    .header("Content-Type", "application/octet-stream").timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            JsonArray served = new JsonObject(r.body()).getJsonArray("classes");
            assertEquals(IMAGES, served.size());
            int[] trainer = predictions(serving.trainedModel(), normalized.images().narrow(0, 0, IMAGES));
            int servedRight = 0;
            int trainerRight = 0;
            for (int i = 0; i < IMAGES; i++) {
                int label = (int) normalized.labels().getDouble(i);
                servedRight += served.getInteger(i) == label ? 1 : 0;
                trainerRight += trainer[i] == label ? 1 : 0;
            }
            double servedAccuracy = servedRight / (double) IMAGES;
            double trainerAccuracy = trainerRight / (double) IMAGES;
            assertTrue(Math.abs(servedAccuracy - trainerAccuracy) <= 0.01, "served " + servedAccuracy
                    + ", the trainers' network " + trainerAccuracy);
            assertTrue(trainerAccuracy > 0.5, "a trained network: " + trainerAccuracy + "\n" + log);
            assertEquals(400, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serving.port()
                    + "/classify")).POST(HttpRequest.BodyPublishers.ofByteArray(new byte[783])).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serving.port()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.lines().anyMatch(l -> l.startsWith("tensorbus_rpc_served_seconds_count{")
                    && l.contains("function=\"classify\"") && l.endsWith(" 1")), metrics);
            assertTrue(metrics.contains("tensorbus_ddp_step_seconds_count{"), "training's meters too");
        }
    }

    private static int[] predictions(Module net, Tensor images) {
        net.eval();
        try (var ignored = Autograd.noGrad()) {
            Tensor classes = net.forward(images.contiguous()).argmax(1, false);
            int[] out = new int[(int) classes.numel()];
            for (int i = 0; i < out.length; i++) {
                out[i] = (int) classes.getDouble(i);
            }
            return out;
        }
    }
}
