package io.tensorbus.workloads.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class PipelineResNet50VerticleTest {
    private final Vertx vertx = Distributed.newVertx();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    @AfterEach
    void closeVertx() {
        vertx.close().await();
    }

    private Future<List<Double>> deploy(JsonObject config) {
        Promise<List<Double>> done = Promise.promise();
        PipelineResNet50Verticle v = new PipelineResNet50Verticle(done, new PrintStream(out, true,
                StandardCharsets.UTF_8), Map.of());
        return vertx.deployVerticle(v, new DeploymentOptions().setConfig(config)).compose(id -> done.future());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aMasterAndTwoShardVerticlesTimeEveryMicroBatchCount(@TempDir Path dir) throws Exception {
        String init = dir.resolve("rendezvous").toUri().toString();
        List<Future<List<Double>>> processes = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            processes.add(deploy(new JsonObject().put("rank", rank).put("initMethod", init)
                    .put("microBatches", new JsonArray(List.of(1, 2))).put("batch", 4).put("img", 32)
                    .put("batches", 1).put("schedule", "1f1b")));
        }
        List<Double> master = processes.get(0).await(100, TimeUnit.SECONDS);
        assertEquals(2, master.size(), master.toString());
        assertEquals(List.of(), processes.get(1).await(20, TimeUnit.SECONDS));
        assertEquals(List.of(), processes.get(2).await(20, TimeUnit.SECONDS));
        String log = out.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("pipeline 1f1b batch=4 img=32 micro_batches=2 s_per_batch="), log);
    }

    @Test
    void aBadConfigFailsTheDeploymentNamingTheField() {
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> deploy(new JsonObject().put("rank", 0).put("worldSize", 3).put("img", 8)).await());
        assertEquals("pipeline-resnet50: bad config: config 'img' must be 32 or more (ResNet50 halves it five times),"
                + " got 8", e.getMessage());
        RuntimeException world = assertThrows(RuntimeException.class,
                () -> deploy(new JsonObject().put("worldSize", 2)).await());
        assertTrue(world.getMessage().contains("config field 'worldSize' must be a whole number from 3 to 3"),
                world.getMessage());
    }
}
