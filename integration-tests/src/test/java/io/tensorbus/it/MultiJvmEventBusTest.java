package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.eventbus.EventBusBridge;
import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A verticle in one JVM calls an RPC worker's function in another through a Hazelcast-clustered event bus
 * ({@link EventBusCheck}): the proven call answers, the unproven one is refused, and a tensor crosses through the
 * tensor codec.
 */
class MultiJvmEventBusTest {
    @Test
    @Timeout(180)
    void aVerticleOfAnotherJvmCallsAWorkersFunctionAndAnUnprovenCallIsRefused() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String cluster = "tensorbus-it-" + UUID.randomUUID();
        int firstPort = 20_000 + 10 * ThreadLocalRandom.current().nextInt(2_000);
        int code = Launcher.run(List.of("--nproc-per-node", "2", "--timeout", "150", EventBusCheck.class.getName(),
                cluster, String.valueOf(firstPort)), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String report = "exit " + code + "\n--- stdout\n" + o + "--- stderr\n" + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        assertTrue(o.contains("[rank 1] CALLER twice=[2.0, 4.0, 6.0]"), report);
        assertTrue(o.contains("[rank 1] CALLER unproven=" + EventBusBridge.REFUSED), report);
        assertTrue(o.contains("[rank 1] CALLER sum=6.0"), report);
        assertTrue(o.contains("[rank 0] BRIDGE OK refused=1"), report);
    }
}
