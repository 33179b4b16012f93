package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** An example's {@code main} in 2 JVMs started by the real launcher, joining through {@code env://}. */
class ExamplesLaunchTest {
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void blockingPointToPointRunsInTwoProcesses() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc-per-node", "2", "--timeout", "150",
                BlockingPointToPoint.class.getName()), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String e = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, "stdout:\n" + o + "\nstderr:\n" + e);
        assertTrue(o.contains("[rank 1] Rank 1 has data 1.0\n"), o);
        assertTrue(o.contains("[rank 0] Rank 0 has data 1.0\n"), o);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void readmesQuickStartRunsInTwoProcessesThatExitWithoutDestroyingTheirGroup() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int code = Launcher.run(List.of("--nproc-per-node", "2", "--timeout", "150", QuickStart.class.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String e = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, "stdout:\n" + o + "\nstderr:\n" + e);
        assertTrue(o.contains("[rank 0] rank 0 of 2: tensor([2., 2., 2., 2.]"), o);
        assertTrue(o.contains("[rank 1] rank 1 of 2: tensor([2., 2., 2., 2.]"), o);
        assertTrue(e.contains("was left open at exit; closing it now"), e);
        System.out.println("QuickStart: 2 processes, launched to exited in " + (System.nanoTime() - t0) / 1_000_000
                + " ms");
    }

    @Test
    void readmesDistributedSnippetIsQuickStartsMain() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        int start = readme.indexOf("```java", readme.indexOf("A distributed program, as in PyTorch's tutorial"));
        String snippet = readme.substring(start + "```java".length(), readme.indexOf("```", start + 7));
        String source = Files.readString(Path.of("src/main/java/io/tensorbus/workloads/examples/QuickStart.java"));
        for (String line : snippet.strip().lines().map(String::strip).filter(l -> !l.isEmpty()).toList()) {
            assertTrue(source.contains(line), "README's line is not in QuickStart.java: " + line);
        }
    }
}
