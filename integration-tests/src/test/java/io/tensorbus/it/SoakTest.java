package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Main;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short {@code tensorbus bench soak} with every rank's heap capped at 256 MiB, as an operator caps it in a
 * container: thousands of mixed collectives up to 1 MiB and RPC calls with tensors and references, each result
 * checked. Before tensor memory left the JVM's direct-memory reservation such a run died of an
 * {@code OutOfMemoryError} in a peer's read. The resident memory after the warm-up may grow by less than half:
 * a leak of one small tensor per iteration would pass that.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SoakTest {
    private static final Pattern GROWTH = Pattern.compile("growth_pct=([0-9.-]+)");

    @Test
    void mixedCollectivesAndRpcCallsStayRightAndBoundedUnderA256MiBHeap() throws Exception {
        try (ChildJvm soak = ChildJvm.start("soak", Map.of("TENSORBUS_JVM_OPTS", "-Xmx256m"), Main.class.getName(),
                "bench", "soak", "--iterations", "2500", "--rpc-calls", "2000", "--sample-every", "500",
                "--warmup", "1000")) {
            Integer code = soak.awaitExit(Duration.ofSeconds(200));
            String out = soak.output();
            assertEquals(0, code, out);
            for (String part : new String[] {"collectives iterations=2500", "rpc calls=2000"}) {
                String line = out.lines().filter(l -> l.startsWith("soak " + part)).findFirst().orElse(null);
                assertNotNull(line, "no 'soak " + part + "' line in:\n" + out);
                assertTrue(line.contains(" wrong=0 "), line);
                Matcher growth = GROWTH.matcher(line);
                assertTrue(growth.find(), line);
                assertTrue(Double.parseDouble(growth.group(1)) < 50, "resident memory grew by half: " + line);
            }
        }
    }
}
