package io.tensorbus.workloads.demo;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FashionMnistTrainingTest {
    @Test
    void aShortRunOnTheEmbeddedDataLearnsWellAboveChance() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        FashionMnistTraining.Options o = new FashionMnistTraining.Options(2, null, 1234, 128, 0.05, 0.9, 3000);
        double acc = new FashionMnistTraining(o).run(new PrintStream(buf, true, StandardCharsets.UTF_8));
        String log = buf.toString(StandardCharsets.UTF_8);
        assertTrue(acc > 0.4, "accuracy " + acc + " should be far above chance (0.1); log:\n" + log);
        assertTrue(log.contains("epoch 2/2  loss"), log);
        assertTrue(log.contains("test accuracy"), log);
    }

    @Test
    void aMissingDataDirectoryIsReportedWithItsPath() {
        FashionMnistTraining.Options o = new FashionMnistTraining.Options(1, Path.of("/no/such/dir"), 1, 128, 0.01,
                0.5, 0);
        IOException e = assertThrows(IOException.class,
                () -> new FashionMnistTraining(o).run(new PrintStream(new ByteArrayOutputStream(), true,
                        StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("/no/such/dir"), e.getMessage());
    }

    @Test
    void badOptionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> FashionMnistTraining.parse(new String[] {"--epochs"}));
        assertThrows(IllegalArgumentException.class, () -> FashionMnistTraining.parse(new String[] {"--nope", "1"}));
        assertThrows(IllegalArgumentException.class, () -> FashionMnistTraining.parse(new String[] {"--epochs", "0"}));
    }
}
