package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
}
