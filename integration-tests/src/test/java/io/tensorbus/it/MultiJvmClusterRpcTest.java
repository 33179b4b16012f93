package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * RPC workers in three JVMs that find each other through a real Hazelcast cluster on loopback (phone-home
 * off, TCP-IP members) and the {@code cluster://} rendezvous ({@link ClusterRpcCheck}).
 */
class MultiJvmClusterRpcTest {
    @Test
    @Timeout(180)
    void workersInThreeJvmsMeetThroughHazelcastCallEachOtherAndShareAnRRef() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String cluster = "tensorbus-it-" + UUID.randomUUID();
        int firstPort = 20_000 + 10 * ThreadLocalRandom.current().nextInt(2_000);
        int code = Launcher.run(List.of("--nproc-per-node", "3", "--timeout", "150", ClusterRpcCheck.class.getName(),
                cluster, String.valueOf(firstPort)), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String report = "exit " + code + "\n--- stdout\n" + o + "--- stderr\n" + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        for (int r = 0; r < 3; r++) {
            assertTrue(o.contains("[rank " + r + "] CLUSTER RPC OK worker" + r), report);
        }
    }
}
