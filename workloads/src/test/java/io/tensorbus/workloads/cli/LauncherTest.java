package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.demo.WorkerVerticle;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Runs {@link Launcher} in-process; its children are real JVMs on this test's class path. */
class LauncherTest {
    private static final String ECHO = EnvEchoMain.class.getName();
    private static final String FAILING = FailingMain.class.getName();

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int launch(String... args) {
        return launchWith(System.getenv(), args);
    }

    /** Launches with {@code env} as the launcher's environment (CLASSPATH, the job's secret). */
    private int launchWith(Map<String, String> env, String... args) {
        return Launcher.run(List.of(args), env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private static void assertContains(String text, String... parts) {
        for (String p : parts) {
            assertTrue(text.contains(p), () -> "'" + p + "' not in:\n" + text);
        }
    }

    @Test
    @Timeout(120)
    void twoChildrenGetTheirRanksAndConnectToTheStoreTheLauncherHosts() {
        assertEquals(0, launch("--nproc-per-node", "2", ECHO, "a", "--b"), err());
        String o = out();
        Set<String> ports = new HashSet<>();
        for (int r = 0; r < 2; r++) {
            String p = "[rank " + r + "] ";
            assertContains(o, p + "env RANK=" + r + "\n", p + "env LOCAL_RANK=" + r + "\n", p + "env WORLD_SIZE=2\n",
                    p + "env LOCAL_WORLD_SIZE=2\n", p + "env GROUP_RANK=0\n", p + "env MASTER_ADDR=127.0.0.1\n",
                    p + "env TENSORBUS_STORE_HOSTED=1\n", p + "args [a, --b]\n", p + "store reachable=true\n");
            Matcher m = Pattern.compile(Pattern.quote(p) + "env MASTER_PORT=(\\d+)\n").matcher(o);
            assertTrue(m.find(), o);
            ports.add(m.group(1));
        }
        assertEquals(1, ports.size(), "one port for all ranks: " + ports);
        assertTrue(Integer.parseInt(ports.iterator().next()) > 0);
        assertContains(err(), "[rank 0] stderr of rank 0 é\n", "[rank 1] stderr of rank 1 é\n",
                "hosted by this launcher");
    }

    @Test
    @Timeout(120)
    void twoNodesMeetAtTheStoreNodeZerosLauncherHostsAndTheirChildrenGetGlobalRanks() throws Exception {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("TENSORBUS_SECRET", "a secret shared by both nodes");
        ByteArrayOutputStream node0 = new ByteArrayOutputStream();
        int[] code0 = {-1};
        Thread first = Thread.ofPlatform().start(() -> code0[0] = Launcher.run(List.of("--nproc-per-node", "2",
                "--nnodes", "2", "--node-rank", "0", "--master-addr", "localhost", "--master-port", "29555", ECHO), env,
                new PrintStream(node0, true, StandardCharsets.UTF_8),
                new PrintStream(node0, true, StandardCharsets.UTF_8)));
        assertEquals(0, launchWith(env, "--nproc-per-node=2", "--nnodes", "2", "--node_rank", "1", "--master-addr",
                "localhost", "--master-port", "29555", ECHO), err());
        first.join(60_000);
        String zero = node0.toString(StandardCharsets.UTF_8);
        assertEquals(0, code0[0], zero);
        String o = out();
        for (int local = 0; local < 2; local++) {
            int r = 2 + local;
            String p = "[rank " + r + "] ";
            assertContains(o, p + "env RANK=" + r + "\n", p + "env LOCAL_RANK=" + local + "\n",
                    p + "env WORLD_SIZE=4\n", p + "env LOCAL_WORLD_SIZE=2\n", p + "env GROUP_RANK=1\n",
                    p + "env MASTER_ADDR=localhost\n", p + "env MASTER_PORT=29555\n",
                    p + "env TENSORBUS_STORE_HOSTED=1\n", p + "env TENSORBUS_SECRET=a secret shared by both nodes\n",
                    p + "store reachable=true");
        }
        assertFalse(o.contains("[rank 0]"), o);
        assertContains(err(), "ranks 2 to 3 of world size 4", "hosted by node 0's launcher");
        assertContains(zero, "[rank 0] env RANK=0", "[rank 1] env GROUP_RANK=0", "hosted by this launcher");
    }

    @Test
    @Timeout(60)
    void aNodeWhosePeersNeverComeFailsAfterTheSetUpTimeoutNamingThem() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("TENSORBUS_SECRET", "a secret shared by both nodes");
        env.put("TENSORBUS_SETUP_TIMEOUT", "2");
        long start = System.nanoTime();
        assertEquals(1, launchWith(env, "--nproc-per-node", "1", "--nnodes", "3", "--node-rank", "0",
                "--master-port", "29558", ECHO), err());
        assertContains(err(), "the launchers of node(s) [1, 2] did not join the job at 127.0.0.1:29558 within 2 s");
        assertTrue(System.nanoTime() - start < 30_000_000_000L);
        assertEquals("", out());
    }

    @Test
    @Timeout(120)
    void linesOfDifferentRanksNeverMixMidLine() {
        assertEquals(0, launch("--nproc-per-node", "2", "--master-port", "29556", ECHO, "lines=400"), err());
        String x = "x".repeat(200);
        Pattern outLine = Pattern.compile("\\[rank (\\d)] (env .*|args .*|store .*|line \\d+ of rank \\1 " + x + ")");
        Pattern errLine = Pattern.compile("\\[rank (\\d)] (err \\d+ of rank \\1 " + x
                + "|stderr of rank \\1 é|WARNING: .*)"
                + "|tensorbus launch: .*");
        int[] counted = new int[2];
        for (String line : out().split("\n")) {
            Matcher m = outLine.matcher(line);
            assertTrue(m.matches(), () -> "mixed or unexpected line: " + line);
            if (m.group(2).startsWith("line ")) {
                counted[Integer.parseInt(m.group(1))]++;
            }
        }
        assertEquals(400, counted[0]);
        assertEquals(400, counted[1]);
        for (String line : err().split("\n")) {
            assertTrue(errLine.matcher(line).matches(), () -> "mixed or unexpected line: " + line);
        }
    }

    @Test
    @Timeout(120)
    void aFailingRankStopsTheOthersAndTheLauncherReturnsItsStatus() throws IOException {
        assertEquals(3, launch("--nproc-per-node", "3", FAILING, dir.toString()), err());
        assertContains(err(), "rank 1 (local rank 1, pid ", "exited with code 3; stopping the other ranks",
                "failed: rank 1 exited with code 3");
        assertContains(out(), "[rank 1] rank 1 fails now", "[rank 0] rank 0 sleeps", "[rank 2] rank 2 sleeps");
        assertStopped(List.of(0, 2));
    }

    @Test
    @Timeout(120)
    void aRankThatFailedOfItsOwnIsTheCauseThoughAPeerThatLostItFailedFirst() {
        assertEquals(9, launch("--nproc-per-node", "2", CauseMain.class.getName(), "lost-peer"), err());
        assertContains(err(), "failed: rank 1 exited with code 9\n");
    }

    @Test
    @Timeout(120)
    void aRankStillEndingAfterItsExceptionIsNotSignalledAndKeepsItsStatus() {
        assertEquals(1, launch("--nproc-per-node", "2", CauseMain.class.getName(), "own"), err());
        assertContains(err(), "rank 1 (local rank 1, pid ", "exited with code 9; stopping the other ranks",
                "failed: rank 0 exited with code 1: java.lang.IllegalStateException: rank 0 gives up\n");
    }

    @Test
    @Timeout(120)
    void theTimeoutStopsEveryRankAndFails() throws IOException {
        assertEquals(Launcher.TIMEOUT_EXIT, launch("--nproc-per-node", "2", "--timeout", "3", FAILING, dir.toString(),
                "never-fail"), err());
        assertContains(err(), "ran longer than --timeout 3 s", "failed: timed out after 3 s");
        assertStopped(List.of(0, 1));
    }

    @Test
    @Timeout(120)
    void aFailedRankRestartsEveryRankWithTheCountAndEachAttemptHasItsLogs() throws IOException {
        Path logs = dir.resolve("logs");
        assertEquals(0, launch("--nproc-per-node", "2", "--max-restarts", "2", "--log-dir", logs.toString(), ECHO,
                "fail-first=1"), err());
        assertContains(err(), "rank 1 (local rank 1, pid ", "exited with code 5; stopping the other ranks",
                "restarting every rank (restart 1 of 2)", "restarting (1 of 2) 2 process(es)");
        assertContains(out(), "[rank 0] env TORCHELASTIC_RESTART_COUNT=0", "[rank 0] env TORCHELASTIC_RESTART_COUNT=1",
                "[rank 1] env TORCHELASTIC_RESTART_COUNT=1", "[rank 1] env TORCHELASTIC_MAX_RESTARTS=2");
        for (int attempt = 0; attempt < 2; attempt++) {
            for (int local = 0; local < 2; local++) {
                Path d = logs.resolve("attempt_" + attempt).resolve(Integer.toString(local));
                assertContains(Files.readString(d.resolve("stdout.log")), "env RANK=" + local + "\n",
                        "env TORCHELASTIC_RESTART_COUNT=" + attempt + "\n");
                assertContains(Files.readString(d.resolve("stderr.log")), "stderr of rank " + local + " é");
            }
        }
        assertFalse(Files.exists(logs.resolve("attempt_2")), "no third attempt");
    }

    @Test
    @Timeout(120)
    void withoutRestartsLeftTheJobFailsNamingTheRank() throws IOException {
        assertEquals(3, launch("--nproc-per-node", "2", "--max-restarts", "1", "--monitor-interval", "0.05", FAILING,
                dir.toString()), err());
        assertContains(err(), "restarting every rank (restart 1 of 1)",
                "failed: rank 1 exited with code 3", "(no restarts left of 1)");
        assertStopped(List.of(0));
    }

    @Test
    @Timeout(120)
    void redirectedStreamsAndFilteredRanksStayOffTheConsole() throws IOException {
        Path logs = dir.resolve("logs");
        assertEquals(0, launch("--nproc-per-node", "2", "--standalone", "--log-dir", logs.toString(), "--redirects",
                "0:1", "--local-ranks-filter", "0", ECHO), err());
        assertFalse(out().contains("[rank 0] env RANK"), "rank 0's stdout is redirected:\n" + out());
        assertFalse(out().contains("[rank 1]") || err().contains("[rank 1]"), "rank 1 is filtered out:\n" + out());
        assertContains(err(), "[rank 0] stderr of rank 0");
        assertContains(Files.readString(logs.resolve("attempt_0/0/stdout.log")), "env RANK=0", "store reachable=true");
        assertFalse(Files.exists(logs.resolve("attempt_0/0/stderr.log")), "only stdout was redirected");
        assertFalse(Files.exists(logs.resolve("attempt_0/1/stdout.log")), "rank 1 has neither redirect nor tee");
    }

    /** Reads the pid files FailingMain wrote and checks those processes are gone. */
    private void assertStopped(List<Integer> ranks) throws IOException {
        for (int r : ranks) {
            Path pidFile = dir.resolve("pid-" + r);
            assertTrue(Files.exists(pidFile), "rank " + r + " never started");
            long pid = Long.parseLong(Files.readString(pidFile).trim());
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
                    "rank " + r + " (pid " + pid + ") still runs");
        }
    }

    @Test
    @Timeout(120)
    void aTargetWithoutDotsRunsThatWorkloadThroughMain() {
        assertEquals(Cli.USAGE, launch("--nproc-per-node", "1", "no-such-workload"), err());
        assertContains(err(), "[rank 0] tensorbus: unknown workload 'no-such-workload'",
                "failed: rank 0 exited with code 2");
    }

    @Test
    @Timeout(120)
    void ranksAsThreadsOfOneJvmEachReadTheirOwnRankAndPrintUnderTheirOwnPrefix() {
        assertEquals(0, launch("--ranks-as-threads", "--nproc-per-node", "2", ECHO, "lines=50"), err());
        String out = out();
        assertContains(out, "[rank 0] env RANK=0", "[rank 0] env LOCAL_RANK=0", "[rank 1] env RANK=1",
                "[rank 1] env LOCAL_RANK=1", "[rank 1] env LOCAL_WORLD_SIZE=2", "[rank 0] store reachable=true",
                "[rank 1] line 49 of rank 1 ");
        assertContains(err(), "starting 1 process(es) with 2 rank thread(s)", "[rank 1] err 49 of rank 1 ");
        Pattern line = Pattern.compile("\\[rank (\\d)] (env|args|store|line \\d+ of rank \\1 x+$).*");
        for (String l : out.lines().toList()) {
            assertTrue(line.matcher(l).matches(), () -> "mixed or unexpected line: " + l);
        }
        Set<String> pids = new HashSet<>();
        Matcher m = Pattern.compile("env TENSORBUS_LAUNCHER_PID=(\\d+)").matcher(out);
        while (m.find()) {
            pids.add(m.group(1));
        }
        assertEquals(1, pids.size(), out);
    }

    @Test
    @Timeout(120)
    void ranksAsThreadsRunInOneJvmAndAFailingRankEndsTheNode() {
        // An empty data directory passes the command's check, so each rank thread fails on its own.
        assertEquals(WorkerVerticle.FAILED_EXIT, launch("--ranks-as-threads", "--nproc-per-node", "2",
                "ddp-fashion-mnist", "--data", dir.toString()), err());
        assertContains(err(), "starting 1 process(es) with 2 rank thread(s), ranks 0 to 1 of world size 2",
                "ranks 0 to 1 (local rank 0, pid ", "failed: ranks 0 to 1 exited with code 1");
        assertTrue(Pattern.compile("(?m)^\\[rank [01]] ddp-fashion-mnist: rank [01] of 2 failed: .*"
                + "train-images-idx3-ubyte").matcher(err()).find(), err());
    }

    @Test
    @Timeout(60)
    void aVerticleThatIsNoWorkerVerticleCannotRunAsThreads() {
        assertEquals(Cli.USAGE, launch("--ranks-as-threads", "--nproc-per-node", "1",
                "io.vertx.launcher.application.VertxApplication", ECHO), err());
        assertContains(err(), "[rank 0] tensorbus: ranks as threads: " + ECHO + " is not a "
                + WorkerVerticle.class.getName() + ", whose ranks can share a JVM");
    }

    static Stream<Arguments> badOptions() {
        return Stream.of(
                Arguments.of(List.of("--nproc-per-node", "0", ECHO), "--nproc-per-node must be from 1 to 1024, got 0"),
                Arguments.of(List.of("--nproc-per-node", "two", ECHO),
                        "Invalid value for option '--nproc-per-node': 'two' is not an int"),
                Arguments.of(List.of(ECHO), "--nproc-per-node is required"),
                Arguments.of(List.of("--nproc-per-node", "2"), "missing TARGET"),
                Arguments.of(List.of("--nproc-per-node"),
                        "Missing required parameter for option '--nproc-per-node' (N)"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "2", "--node-rank", "2", ECHO),
                        "--node-rank must be in [0, 2) for --nnodes 2, got 2"),
                Arguments.of(List.of("--nproc-per-node", "1", "--node-rank", "-1", ECHO),
                        "--node-rank must be at least 0, got -1"),
                Arguments.of(List.of("--nproc-per-node", "1", "--master-port", "70000", ECHO),
                        "--master-port must be from 0 to 65535, got 70000"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "2", "--master-port", "0", ECHO),
                        "--master-port 0 (a free port picked by the launcher) works with one node only"),
                Arguments.of(List.of("--nproc-per-node", "1", "--timeout", "0", ECHO),
                        "--timeout must be at least 1, got 0"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nproc-per-node", "2", ECHO),
                        "option '--nproc-per-node' (N) should be specified only once"),
                Arguments.of(List.of("--nproc-per-node", "1", "--frobnicate", "3", ECHO),
                        "Unknown option: '--frobnicate'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--standalone", "--master-port", "5000", ECHO),
                        "--standalone runs one node with its own rendezvous store"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "2", "--max-restarts", "1", ECHO),
                        "--max-restarts with several nodes needs the elastic rendezvous"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "2:3", ECHO),
                        "--rdzv-backend must be one of [c10d, hazelcast] for an elastic job (--nnodes MIN:MAX or"
                                + " --rdzv-*), got none"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "3:2", ECHO),
                        "--nnodes must be a whole number >= 1 or MIN:MAX with 1 <= MIN <= MAX, got '3:2'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "1:2", "--rdzv-backend", "etcd", ECHO),
                        "--rdzv-backend must be one of [c10d, hazelcast]"),
                Arguments.of(List.of("--nproc-per-node", "1", "--nnodes", "1:2", "--rdzv-backend", "c10d",
                        "--node-rank", "1", ECHO),
                        "with the elastic rendezvous (--nnodes MIN:MAX, --rdzv-*) the rendezvous"
                                + " assigns the nodes' ranks: leave out --node-rank"),
                Arguments.of(List.of("--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", "h:1,g:2",
                        ECHO), "--rdzv-endpoint of the c10d backend is one HOST:PORT, got 'h:1,g:2'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", "host",
                        ECHO), "--rdzv-endpoint must be HOST:PORT with a port 1 to 65535, got 'host'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-conf", "x=1", ECHO),
                        "--rdzv-conf knows join_timeout and last_call_timeout, got 'x=1'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-conf",
                        "join_timeout=-3", ECHO), "--rdzv-conf join_timeout must be a whole number of seconds above 0,"
                                + " got '-3'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-id", "a b", ECHO),
                        "--rdzv-id may hold 1 to 64 letters, digits and -_."),
                Arguments.of(List.of("--nproc-per-node", "1", "--redirects", "3", ECHO),
                        "--redirects and --tee write files: give --log-dir DIR too"),
                Arguments.of(List.of("--nproc-per-node", "1", "--log-dir", "/tmp/x", "--tee", "5", ECHO),
                        "--tee takes 0 (none), 1 (stdout), 2 (stderr) or 3 (both)"),
                Arguments.of(List.of("--nproc-per-node", "1", "--monitor-interval", "0", ECHO),
                        "--monitor-interval must be a number of seconds above 0"),
                Arguments.of(List.of("--nproc-per-node", "1", "--local-ranks-filter", "a", ECHO),
                        "--local-ranks-filter takes local ranks (0 or more), got 'a'"),
                Arguments.of(List.of("--nproc-per-node", "1", "--max-restarts", "-1", ECHO),
                        "--max-restarts must be at least 0, got -1"),
                Arguments.of(List.of("--nproc-per-node", "1", "com.example.NoSuchMain"),
                        "TARGET class com.example.NoSuchMain is not on the class path"),
                Arguments.of(List.of("--nproc-per-node", "1", "-cp", "/no/such/dir", "com.example.NoSuchMain"),
                        "TARGET class com.example.NoSuchMain is not on the class path (/no/such/dir and tensorbus's "
                        + "own)"),
                Arguments.of(List.of("--nproc-per-node", "1", "-jar", "/no/such/app.jar"),
                        "-jar /no/such/app.jar: no such file"),
                Arguments.of(List.of("--nproc-per-node", "1", "--classpath", " ", ECHO),
                        "--classpath must be a class path such as target/classes:lib/*, got ''"));
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    @Timeout(30)
    void badOptionsFailWithUsageAndSayWhatIsAllowed(List<String> args, String message) {
        assertEquals(Cli.USAGE, launch(args.toArray(String[]::new)));
        assertContains(err(), "tensorbus launch: " + message, "(tensorbus launch --help shows its options)");
        assertEquals("", out());
    }

    @Test
    @Timeout(120)
    void everyRankOfAOneNodeJobGetsTheSameNewSecretAndTheLaunchersPid() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("TENSORBUS_SECRET");
        env.remove("TENSORBUS_SECRET_FILE");
        assertEquals(0, launchWith(env, "--nproc-per-node", "2", ECHO), err());
        Matcher m = Pattern.compile("\\[rank (\\d)\\] env TENSORBUS_SECRET=([0-9a-f]{64})\n").matcher(out());
        Set<String> secrets = new HashSet<>();
        while (m.find()) {
            secrets.add(m.group(2));
        }
        assertEquals(1, secrets.size(), "one secret for both ranks:\n" + out());
        assertContains(out(), "[rank 0] env TENSORBUS_LAUNCHER_PID=" + ProcessHandle.current().pid() + "\n",
                "[rank 1] env TENSORBUS_LAUNCHER_PID=" + ProcessHandle.current().pid() + "\n");
        out.reset();
        assertEquals(0, launchWith(env, "--nproc-per-node", "1", ECHO), err());
        assertFalse(out().contains(secrets.iterator().next()), "the next job reused the secret");
    }

    @Test
    @Timeout(30)
    void aJobOfSeveralNodesWithoutASecretIsRefusedSayingHowToMakeOne() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("TENSORBUS_SECRET");
        env.remove("TENSORBUS_SECRET_FILE");
        assertEquals(Cli.USAGE, launchWith(env, "--nproc-per-node", "1", "--nnodes", "2", "--master-port", "29557",
                ECHO));
        assertContains(err(), "a job of 2 nodes needs the same secret on every node", "tensorbus secret",
                "TENSORBUS_SECRET_FILE");
        assertEquals("", out());
        env.put("TENSORBUS_SECRET", "short");
        assertEquals(Cli.USAGE, launchWith(env, "--nproc-per-node", "1", ECHO));
        assertContains(err(), "TENSORBUS_SECRET holds 5 bytes; a job secret needs at least 16");
    }

    @Test
    @Timeout(30)
    void helpPrintsTheUsage() {
        assertEquals(0, launch("--help"));
        assertContains(out(), "usage: tensorbus launch --nproc-per-node N", "LOCAL_WORLD_SIZE", "--classpath", "=PATH",
                "-jar APP.jar", "TENSORBUS_SECRET");
    }

    @Test
    @Timeout(30)
    void mainDispatchesLaunchAndListsItInItsUsage() {
        List<String> args = new ArrayList<>(List.of("launch", "--nproc-per-node", "0", ECHO));
        int code = Main.run(args.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(Cli.USAGE, code);
        assertContains(err(), "--nproc-per-node must be from 1 to 1024");
        assertEquals(0, Main.run(new String[] {"help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertContains(out(), "  launch ");
    }

    @Test
    void eachRankProcessGetsAMetricsPortOfItsOwnAndRankThreadsShareOne() {
        LaunchOptions o = LaunchOptions.parse(List.of("--metrics-port", "9400", "--nproc-per-node", "3", ECHO));
        assertEquals(List.of(9400, 9401, 9402), List.of(o.metricsPort(0), o.metricsPort(1), o.metricsPort(2)));
        LaunchOptions threads = LaunchOptions.parse(List.of("--ranks-as-threads", "--metrics-port", "9400",
                "--nproc-per-node", "3", ECHO));
        assertEquals(9400, threads.metricsPort(2));
        assertEquals(-1, LaunchOptions.parse(List.of("--nproc-per-node", "3", ECHO)).metricsPort(0));
    }

    @Test
    void aMetricsPortWhoseRanksWouldPassTheLastPortIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LaunchOptions.parse(List.of("--metrics-port", "65535", "--nproc-per-node", "2", ECHO)));
        assertTrue(e.getMessage().contains("--metrics-port"), e.getMessage());
        assertEquals(65535, LaunchOptions.parse(List.of("--ranks-as-threads", "--metrics-port", "65535",
                "--nproc-per-node", "2", ECHO)).metricsPort(1));
    }
    @Test
    @Timeout(120)
    void theMergedTimelineOfThreeProcessesNamesTheRankThatSleptTheStraggler() throws IOException {
        Path timelines = dir.resolve("timeline");
        assertEquals(0, launch("--nproc-per-node", "3", StragglerMain.class.getName(), timelines.toString()), err());
        Path merged = dir.resolve("job.json");
        assertEquals(0, Main.run(new String[] {"timeline", timelines.toString(), "-o", merged.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)),
                err());
        assertContains(out(), "merged the timelines of ranks [0, 1, 2]",
                "allReduce #2 on group 'default': rank 2 called last");
        assertTrue(Files.readString(merged).startsWith("{\"traceEvents\":["));
    }
}
