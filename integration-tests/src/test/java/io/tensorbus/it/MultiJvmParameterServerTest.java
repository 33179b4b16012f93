package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The parameter-server workload end to end across JVMs, as a user starts it: {@code tensorbus run
 * parameter-server} (through {@code Main.run}, in-process) starts the server and two trainers through the
 * launcher, each deploying {@code ParameterServerVerticle} under Vert.x's {@code VertxApplication} and joining a
 * Hazelcast cluster on loopback; and {@code tensorbus launch} running the verticle under the legacy
 * {@code io.vertx.core.Launcher run}, the cluster taken from the launcher's MASTER_PORT.
 */
class MultiJvmParameterServerTest {
    private static void assertTrained(String o, int trainers) {
        assertTrue(o.contains("[rank 0] tensorbus parameter server: tutorial network on Fashion-MNIST (embedded"
                + " subset)"), o);
        assertTrue(o.contains(trainers + " trainer(s) x batch " + 128 / trainers + " (global "
                + 128 / trainers * trainers + ")"), o);
        assertTrue(Pattern.compile("(?m)^\\[rank 0] epoch 1/1  loss \\d+\\.\\d{4}  [\\d.]+ s  \\d+ samples/s$")
                .matcher(o).find(), o);
        assertTrue(Pattern.compile("(?m)^\\[rank 0] test accuracy \\d+\\.\\d{2}%$").matcher(o).find(), o);
        assertFalse(o.contains("WARNING: RRefs not released"), "no RRef leaked:\n" + o);
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void runParameterServerTrainsOnThreeJvmsMeetingOverHazelcast() {
        LaunchResult r = LaunchResult.tensorbus("run", "parameter-server", "--trainers", "2", "--epochs", "1",
                "--limit", "512").succeeded();
        assertTrained(r.out(), 2);
        assertTrue(r.err().contains("starting 3 process(es)"), r.err());
        assertFalse(r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void runParameterServerWithRanksAsThreadsTrainsInOneJvmMeetingOverHazelcast() {
        // Three Hazelcast members, RPC agents and default agents in one JVM, one per rank thread.
        LaunchResult r = LaunchResult.tensorbus("run", "parameter-server", "--ranks-as-threads", "--trainers", "2",
                "--epochs", "1", "--limit", "512").succeeded();
        assertTrained(r.out(), 2);
        assertTrue(r.err().contains("starting 1 process(es) with 3 rank thread(s)"), r.err());
        assertFalse(r.err().contains("RRefs not released"), "no RRef leaked:\n" + r.err());
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void launchRunsTheVerticleUnderTheLegacyVertxLauncher() {
        // The run the multi-host test compares with the same job across hosts: made once for both.
        assertTrained(LoopbackRuns.output(LoopbackRuns.PARAMETER_SERVER), 1);
    }
}
