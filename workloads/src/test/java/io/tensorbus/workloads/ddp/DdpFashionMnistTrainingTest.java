package io.tensorbus.workloads.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class DdpFashionMnistTrainingTest {
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void twoRanksAsThreadsEndWithIdenticalParametersAndRankZeroPrintsTheResults() {
        FashionMnistTraining.Options o = new FashionMnistTraining.Options(1, null, 1234, 128, 0.01, 0.5, 512);
        Map<Integer, DdpFashionMnistTraining.Result> results = new ConcurrentHashMap<>();
        Map<Integer, ByteArrayOutputStream> logs = new ConcurrentHashMap<>();
        Distributed.spawn(2, Duration.ofSeconds(50), pg -> {
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            logs.put(pg.rank(), log);
            results.put(pg.rank(), new DdpFashionMnistTraining(o).run(pg,
                    new PrintStream(log, true, StandardCharsets.UTF_8)));
        });
        String rank0 = logs.get(0).toString(StandardCharsets.UTF_8);
        assertTrue(rank0.contains("2 rank(s) x batch 64 (global 128), 4 steps per epoch"), rank0);
        assertTrue(rank0.matches("(?s).*epoch 1/1  loss \\d+\\.\\d{4}  .*samples/s\n.*"), rank0);
        assertTrue(rank0.contains("test accuracy "), rank0);
        assertEquals("", logs.get(1).toString(StandardCharsets.UTF_8), "only rank 0 prints");
        DdpFashionMnistTraining.Result r0 = results.get(0);
        DdpFashionMnistTraining.Result r1 = results.get(1);
        assertEquals(r0.accuracy(), r1.accuracy(), "every rank reports the all-reduced accuracy");
        assertEquals(r0.lastLoss(), r1.lastLoss(), "every rank reports the all-reduced loss");
        assertTrue(r0.accuracy() > 0 && r0.accuracy() <= 1, "accuracy " + r0.accuracy());
        assertTrue(Double.isFinite(r0.lastLoss()), "loss " + r0.lastLoss());
        Map<String, Tensor> p1 = r1.model().namedParameters();
        r0.model().namedParameters().forEach((name, p) -> assertArrayEquals(p.toFloatArray(),
                p1.get(name).toFloatArray(), name + " differs between the ranks"));
    }
}
