package io.tensorbus.workloads.demo;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SpiralDemoTest {
    @Test
    void trainingLearnsTheSpiralsWellAboveChance() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        double acc = new SpiralDemo(15, 1).train(new PrintStream(buf, true, StandardCharsets.UTF_8));
        String log = buf.toString(StandardCharsets.UTF_8);
        assertTrue(acc > 0.9, "accuracy " + acc + " should beat chance (0.33) by far; log:\n" + log);
        assertTrue(log.contains("epoch 15/15"), log);
    }

    @Test
    void rejectsZeroEpochs() {
        assertThrows(IllegalArgumentException.class, () -> new SpiralDemo(0, 1));
    }
}
