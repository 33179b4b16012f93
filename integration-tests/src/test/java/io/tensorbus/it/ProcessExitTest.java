package io.tensorbus.it;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.workloads.cli.Main;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Processes end when their program ends, as PyTorch scripts do: ranks of {@link ExitCheck} (a program that
 * never calls {@code close} or {@code System.exit}) started by hand and by {@code tensorbus launch}, and jobs
 * of two nodes (two launchers on this machine) where a rank or a whole launcher is killed.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ProcessExitTest {
    /** How long a JVM may take to start, meet its peers and finish a tiny job here. */
    private static final Duration STARTED = Duration.ofSeconds(40);
    /** The group timeout of the ranks: every failure must end them well before it. */
    private static final Duration GROUP_TIMEOUT = Duration.ofSeconds(60);

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The environment of rank {@code rank} started by hand (rank 0 hosts the store; no launcher). */
    private static Map<String, String> byHand(int rank, int world, int port) {
        return Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", String.valueOf(port), "RANK", String.valueOf(rank),
                "WORLD_SIZE", String.valueOf(world), "TENSORBUS_CHECK_TIMEOUT_S",
                String.valueOf(GROUP_TIMEOUT.toSeconds()));
    }

    private static List<ChildJvm> startByHand(int world, String... args) throws Exception {
        int port = freePort();
        List<ChildJvm> jvms = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            jvms.add(ChildJvm.start("rank-" + r, byHand(r, world, port), ExitCheck.class.getName(), args));
        }
        return jvms;
    }

    private static String outputs(List<ChildJvm> jvms) {
        StringBuilder b = new StringBuilder();
        for (ChildJvm j : jvms) {
            b.append("--- ").append(j).append('\n').append(j.output());
        }
        return b.toString();
    }

    @Test
    void ranksWhoseMainReturnsWithoutClosingExitStartedByHand() throws Exception {
        List<ChildJvm> jvms = startByHand(2, "forget");
        try {
            for (ChildJvm j : jvms) {
                Integer code = j.awaitExit(STARTED);
                assertNotNull(code, j + " did not exit after its main returned\n" + outputs(jvms));
                assertEquals(0, code, outputs(jvms));
                assertTrue(j.output().contains("sum=2.0"), outputs(jvms));
                assertTrue(j.output().contains("tensorbus: warning: process group 'default'")
                        && j.output().contains("was left open at exit; closing it now"), outputs(jvms));
            }
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }

    @Test
    void ranksWhoseMainReturnsWithoutClosingExitUnderTheLauncher() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "2", "--timeout", "60", ExitCheck.class.getName(),
                "forget");
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("[rank 0] DONE rank 0 sum=2.0") && r.out().contains("[rank 1] DONE rank 1 sum=2.0"),
                r.toString());
    }

    @Test
    void aProgramThatJoinedAHazelcastClusterExitsWithoutClosingIt() throws Exception {
        String cluster = "exit-" + System.nanoTime();
        try (ChildJvm j = ChildJvm.start("hazelcast", Map.of(), ClusterExitCheck.class.getName(), cluster,
                String.valueOf(freePort()))) {
            Integer code = j.awaitExit(STARTED);
            assertNotNull(code, "a program that left its cluster member running did not end\n" + j.output());
            assertEquals(0, code, j.output());
            assertTrue(j.output().contains("JOINED true") && j.output().contains("the Hazelcast member of cluster '"
                    + cluster + "' was left open at exit"), j.output());
        }
    }

    @Test
    void aRankThatThrowsMakesEverySurvivorExitNonZeroStartedByHand() throws Exception {
        List<ChildJvm> jvms = startByHand(3, "throw", "1");
        try {
            Integer victim = jvms.get(1).awaitExit(STARTED);
            assertEquals(1, victim, "the exception escaping main\n" + outputs(jvms));
            long left = System.nanoTime();
            for (int r : new int[] {0, 2}) {
                Integer code = jvms.get(r).awaitExit(GROUP_TIMEOUT.dividedBy(2));
                assertNotNull(code, "rank " + r + " still ran long after rank 1 ended\n" + outputs(jvms));
                assertNotEquals(0, code, outputs(jvms));
                assertTrue(jvms.get(r).output().contains("rank 1"), "rank " + r + " does not say rank 1 was lost\n"
                        + outputs(jvms));
            }
            System.out.println("a rank threw; the survivors ended " + (System.nanoTime() - left) / 1_000_000
                    + " ms after it");
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }

    @Test
    void aRankThatThrowsFailsTheLaunchWithItsExceptionThoughTheOthersEndFirst() {
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "3", "--timeout", "60", ExitCheck.class.getName(),
                "slow", "1");
        assertEquals(1, r.code(), r.toString());
        // The others end seconds before rank 1 does; the last line still names the cause: rank 1, which failed first.
        assertTrue(Pattern.compile("tensorbus launch: rank [02] \\(.*stopping the other ranks").matcher(r.err()).find(),
                "another rank ended first:\n" + r);
        String failure = lastLine(r.err(), "tensorbus launch: failed: ");
        assertTrue(failure.matches(".*failed: rank 1 exited with code 1: "
                + "java.lang.IllegalStateException: rank 1 gives up.*"), r.toString());
    }

    @Test
    void twoNodesEndWhenARankOfOneIsKilled() throws Exception {
        List<ChildJvm> launchers = startTwoNodes("kill", "3");
        try {
            List<Integer> codes = awaitLaunchers(launchers);
            String all = outputs(launchers);
            assertNotEquals(0, codes.get(0), all);
            assertNotEquals(0, codes.get(1), all);
            assertTrue(launchers.get(1).output().contains("failed: rank 3 exited with code 137"), all);
            String failure = lastLine(launchers.get(0).output(), "tensorbus launch: failed: ");
            assertTrue(failure.contains("rank 2") || failure.contains("rank 3"),
                    "node 0's launcher does not name a lost rank of node 1: " + failure + "\n" + all);
        } finally {
            launchers.forEach(ChildJvm::close);
        }
    }

    @Test
    void aLauncherKilledOnOneNodeEndsTheJobOnEveryNode() throws Exception {
        List<ChildJvm> launchers = startTwoNodes("loop");
        try {
            for (int rank = 0; rank < 4; rank++) {
                assertTrue(launchers.get(rank / 2).awaitOutput("READY rank " + rank, STARTED), outputs(launchers));
            }
            List<ProcessHandle> node1Ranks = launchers.get(1).process().descendants().toList();
            assertFalse(node1Ranks.isEmpty(), outputs(launchers));
            launchers.get(1).process().destroyForcibly();
            long killed = System.nanoTime();
            Integer code = launchers.get(0).awaitExit(GROUP_TIMEOUT.dividedBy(2));
            assertNotNull(code, "node 0 still runs long after node 1's launcher died\n" + outputs(launchers));
            assertNotEquals(0, code, outputs(launchers));
            for (ProcessHandle rank : node1Ranks) {
                rank.onExit().get(10, TimeUnit.SECONDS);
            }
            String failure = lastLine(launchers.get(0).output(), "tensorbus launch: failed: ");
            assertTrue(failure.contains("rank 2") || failure.contains("rank 3"), failure + "\n" + outputs(launchers));
            System.out.println("node 1's launcher was killed; node 0's ended "
                    + (System.nanoTime() - killed) / 1_000_000
                    + " ms later: " + failure);
        } finally {
            launchers.forEach(ChildJvm::close);
        }
    }

    /** Two launcher JVMs of one job on this machine, 2 ranks each, sharing a secret, running ExitCheck. */
    private static List<ChildJvm> startTwoNodes(String... checkArgs) throws Exception {
        int port = freePort();
        Map<String, String> env = new HashMap<>();
        env.put(JobSecret.ENV, JobSecret.newSecretText());
        env.put("TENSORBUS_CHECK_TIMEOUT_S", String.valueOf(GROUP_TIMEOUT.toSeconds()));
        List<ChildJvm> launchers = new ArrayList<>();
        for (int node = 0; node < 2; node++) {
            List<String> args = new ArrayList<>(List.of("launch", "--nproc-per-node", "2", "--nnodes", "2",
                    "--node-rank", String.valueOf(node), "--master-port", String.valueOf(port), "--timeout", "120",
                    ExitCheck.class.getName()));
            args.addAll(List.of(checkArgs));
            launchers.add(ChildJvm.start("launcher-" + node, env, Main.class.getName(), args.toArray(String[]::new)));
        }
        return launchers;
    }

    private static List<Integer> awaitLaunchers(List<ChildJvm> launchers) throws InterruptedException {
        List<Integer> codes = new ArrayList<>();
        for (ChildJvm l : launchers) {
            Integer code = l.awaitExit(STARTED.plus(GROUP_TIMEOUT.dividedBy(2)));
            assertNotNull(code, l + " did not exit\n" + outputs(launchers));
            codes.add(code);
        }
        return codes;
    }

    private static String lastLine(String text, String prefix) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(prefix) + ".*$").matcher(text);
        String last = "";
        while (m.find()) {
            last = m.group();
        }
        return last;
    }
}
