package io.tensorbus.workloads.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
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

class DdpFashionMnistVerticleTest {
    private final Vertx vertx = Distributed.newVertx();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    @AfterEach
    void closeVertx() {
        vertx.close().await();
    }

    private Future<DdpFashionMnistTraining.Result> deploy(JsonObject config) {
        Promise<DdpFashionMnistTraining.Result> done = Promise.promise();
        DdpFashionMnistVerticle v = new DdpFashionMnistVerticle(done, new PrintStream(out, true,
                StandardCharsets.UTF_8), Map.of());
        return vertx.deployVerticle(v, new DeploymentOptions().setConfig(config)).compose(id -> done.future());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void twoVerticlesTrainAsTwoRanksOffTheEventLoopAndAgree(@TempDir Path dir) {
        String init = dir.resolve("rendezvous").toUri().toString();
        List<Future<DdpFashionMnistTraining.Result>> ranks = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            ranks.add(deploy(new JsonObject().put("rank", rank).put("worldSize", 2).put("initMethod", init)
                    .put("epochs", 1).put("limit", 256).put("timeoutSeconds", 50)));
        }
        DdpFashionMnistTraining.Result r0 = ranks.get(0).await();
        DdpFashionMnistTraining.Result r1 = ranks.get(1).await();
        String log = out.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("test accuracy "), log);
        assertEquals(r0.accuracy(), r1.accuracy());
        Map<String, Tensor> p1 = r1.model().namedParameters();
        r0.model().namedParameters().forEach((name, p) -> assertArrayEquals(p.toFloatArray(),
                p1.get(name).toFloatArray(), name));
    }

    @Test
    void aBadConfigFailsTheDeploymentNamingTheField() {
        Future<?> f = deploy(new JsonObject().put("limit", "all"));
        RuntimeException e = assertThrows(RuntimeException.class, f::await);
        assertEquals("ddp-fashion-mnist: bad config: config field 'limit' must be a whole number >= 0, got \"all\"",
                e.getMessage());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aMissingDataDirectoryFailsTheRunNamingTheRank() {
        Future<?> f = deploy(new JsonObject().put("dataDir", "/no/such/dir"));
        RuntimeException e = assertThrows(RuntimeException.class, f::await);
        assertTrue(e.getMessage().startsWith("rank 0 of 1 failed: /no/such/dir"), e.getMessage());
    }
}
