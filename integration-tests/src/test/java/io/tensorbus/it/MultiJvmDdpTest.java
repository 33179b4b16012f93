package io.tensorbus.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The DDP workload end to end across JVMs, as a user starts it: {@code tensorbus run ddp-fashion-mnist} (through
 * {@code Main.run}, in-process) starts two JVMs through the launcher, each deploying
 * {@code DdpFashionMnistVerticle} under Vert.x's {@code VertxApplication}. The legacy {@code io.vertx.core.Launcher
 * run} is the parameter server's to check ({@link MultiJvmParameterServerTest}): the launcher treats every verticle
 * the same, and each such run costs the suite seconds. The same job with {@code --ranks-as-threads} (both ranks as
 * threads of one JVM) must train to the same loss and accuracy.
 */
class MultiJvmDdpTest {
    private static void assertTrained(String o) {
        assertTrue(o.contains("[rank 0] tensorbus DDP: tutorial network on Fashion-MNIST (embedded subset)"), o);
        assertTrue(o.contains("2 rank(s) x batch 64 (global 128)"), o);
        assertTrue(Pattern.compile("(?m)^\\[rank 0] epoch 1/1  loss \\d+\\.\\d{4}  [\\d.]+ s  \\d+ samples/s$")
                .matcher(o).find(), o);
        assertTrue(Pattern.compile("(?m)^\\[rank 0] test accuracy \\d+\\.\\d{2}%$").matcher(o).find(), o);
        assertFalse(o.contains("[rank 1] "), "only rank 0 prints:\n" + o);
    }

    /** The epoch's loss and the test accuracy, which depend on the arithmetic and the data alone. */
    private static List<String> results(String out) {
        return Pattern.compile("loss \\d+\\.\\d{4}|test accuracy \\d+\\.\\d{2}%").matcher(out).results()
                .map(MatchResult::group).toList();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void runDdpFashionMnistTrainsOnTwoJvmsUnderVertxApplication() {
        LaunchResult r = LaunchResult.tensorbus("run", "ddp-fashion-mnist", "--nproc", "2", "--epochs", "1",
                "--limit", "512").succeeded();
        assertTrained(r.out());
        assertTrue(r.err().contains("running io.vertx.launcher.application.VertxApplication"), r.err());

        LaunchResult threads = LaunchResult.tensorbus("run", "ddp-fashion-mnist", "--nproc", "2", "--epochs", "1",
                "--limit", "512", "--ranks-as-threads").succeeded();
        assertTrained(threads.out());
        assertTrue(threads.err().contains("starting 1 process(es) with 2 rank thread(s)"), threads.err());
        assertEquals(2, results(r.out()).size(), r.out());
        assertEquals(results(r.out()), results(threads.out()), "ranks as threads train as processes do");
    }
}
