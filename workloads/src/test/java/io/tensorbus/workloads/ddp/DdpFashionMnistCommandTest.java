package io.tensorbus.workloads.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class DdpFashionMnistCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(Map<String, String> env, String... args) {
        return DdpFashionMnistCommand.run(List.of(args), env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void parsesTheProcessCountAndTheTrainingOptions() {
        DdpFashionMnistCommand.Args a = DdpFashionMnistCommand.Args.parse(List.of("--epochs", "2", "--nproc", "3",
                "--limit", "512"));
        assertEquals(3, a.nproc());
        FashionMnistTraining.Options d = FashionMnistTraining.Options.defaults();
        assertEquals(new FashionMnistTraining.Options(2, null, d.seed(), d.batchSize(), d.lr(), d.momentum(), 512),
                a.training());
        assertEquals(0, DdpFashionMnistCommand.Args.parse(List.of()).nproc(), "not given");
    }

    @Test
    void badArgumentsSayWhatIsAllowed() {
        assertMessage("--nproc must be from 1 to 1024, got 0", "--nproc", "0");
        assertMessage("Invalid value for option '--nproc': 'two' is not an int", "--nproc", "two");
        assertMessage("Missing required parameter for option '--nproc' (N)", "--nproc");
        assertMessage("--epochs must be at least 1, got 0", "--epochs", "0");
        assertMessage("Invalid value for option '--limit': 'all' is not an int", "--limit", "all");
        assertMessage("Unknown options: '--batch', '64'", "--batch", "64");
        assertMessage("--data /no/such/dir is not a directory", "--data", "/no/such/dir");
    }

    @Test
    void eachRankRunsTheVerticleUnderVertxApplicationWithTheOptionsAsConfig() {
        JsonObject config = new JsonObject().put("epochs", 1);
        assertEquals(List.of("--nproc-per-node", "2", "io.vertx.launcher.application.VertxApplication",
                        "io.tensorbus.workloads.ddp.DdpFashionMnistVerticle", "-conf", "{\"epochs\":1}"),
                DdpFashionMnistCommand.launchArgs(2, false, config));
    }

    @Test
    void insideALaunchedJobANprocThatDisagreesWithTheWorldSizeIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run(Map.of("RANK", "0", "WORLD_SIZE", "2"), "--nproc", "3"));
        assertTrue(e.getMessage().startsWith("--nproc 3 disagrees with WORLD_SIZE=2"), e.getMessage());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void insideALaunchedJobItRunsThisRankInProcess() {
        assertEquals(0, run(Map.of("RANK", "0", "WORLD_SIZE", "1"), "--epochs", "1", "--limit", "128"),
                err.toString(StandardCharsets.UTF_8));
        String log = out.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("1 rank(s) x batch 128 (global 128), 1 steps per epoch"), log);
        assertTrue(log.contains("test accuracy "), log);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aFailingRankExitsWithOneAndSaysWhichRankFailed(@TempDir Path empty) {
        assertEquals(DdpFashionMnistVerticle.FAILED_EXIT, run(Map.of("RANK", "0", "WORLD_SIZE", "1"), "--data",
                empty.toString()));
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(e.startsWith("ddp-fashion-mnist: rank 0 of 1 failed: "), e);
        assertTrue(e.contains("train-images-idx3-ubyte"), "names the missing file: " + e);
    }

    private void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(Map.of(), args));
        assertTrue(e.getMessage().startsWith(expected), "message: " + e.getMessage());
    }
}
