package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every {@code ProcessGroup} operation across real JVMs: {@code tensorbus launch} (in-process, as
 * {@link Launcher#run}) starts {@link CollectivesCheck} in N child JVMs on this test's class path, hosts the
 * rendezvous store, and prefixes their output.
 */
class MultiJvmCollectivesTest {

    @Test
    @Timeout(value = 130, unit = TimeUnit.SECONDS)
    void everyOperationAgreesAcrossThreeJvmsStartedByTheLauncher() {
        // World 3 takes the paths of a size that is no power of two; hosts.MultiHostTest runs world 4 across hosts.
        everyOperationAgrees(3);
    }

    @Test
    @Timeout(value = 130, unit = TimeUnit.SECONDS)
    void everyOperationAgreesAcrossJvmsWithSharedMemoryOff() {
        // The JVMs share a host, so by default their frames go through shared memory: this runs them on sockets.
        everyOperationAgrees(3, "tcp.sharedMemory=false");
    }

    @Test
    @Timeout(value = 130, unit = TimeUnit.SECONDS)
    void everyOperationAgreesAcrossThreeRankThreadsOfOneJvm() {
        // As the launcher runs them with --ranks-as-threads: one JVM, each rank with its own Vert.x and group.
        String report = everyOperationAgrees(List.of("--ranks-as-threads"), 3);
        assertTrue(report.contains("starting 1 process(es) with 3 rank thread(s)"), report);
    }

    /** Runs {@link CollectivesCheck} on {@code world} JVMs with the backend settings {@code properties}. */
    private static void everyOperationAgrees(int world, String... properties) {
        everyOperationAgrees(List.of(), world, properties);
    }

    /**
     * Runs {@link CollectivesCheck} on {@code world} ranks launched with the launcher options {@code launch} and the
     * backend settings {@code properties}; returns the report of the run.
     */
    private static String everyOperationAgrees(List<String> launch, int world, String... properties) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // A 30 s group timeout (every operation here takes well under a second), and --timeout bounds the
        // whole job: the launcher stops every child and returns 124 when it runs out.
        List<String> args = new ArrayList<>(launch);
        args.addAll(List.of("--nproc-per-node", String.valueOf(world), "--timeout",
                "100", CollectivesCheck.class.getName(), "30"));
        args.addAll(List.of(properties));
        int code = Launcher.run(args,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String report = "exit " + code + "\n--- stdout\n" + o + "--- stderr\n" + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        for (int r = 0; r < world; r++) {
            Matcher m = Pattern.compile("(?m)^\\[rank " + r + "\\] CHECK OK (\\d+) ops \\(rank " + r + " of " + world
                    + "\\)$").matcher(o);
            assertTrue(m.find(), "no CHECK OK line of rank " + r + "\n" + report);
            assertTrue(Integer.parseInt(m.group(1)) > 100, "too few operations checked on rank " + r + "\n" + report);
        }
        assertTrue(!o.contains("CHECK FAILED"), report);
        return report;
    }
}
