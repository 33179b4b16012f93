package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.TcpStore;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Failures across real JVMs that this test starts itself ({@link ChildJvm}), with the rendezvous store hosted
 * here as a launcher would ({@code TENSORBUS_STORE_HOSTED=1}): a rank whose JVM dies in the middle of a large
 * allReduce, and a world-size mismatch at init.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PeerFailureTest {
    /** The group timeout of the children: a lost peer must be reported well before it. */
    private static final Duration GROUP_TIMEOUT = Duration.ofSeconds(20);

    /** The job's secret: the children get it as a launcher would give it. */
    private static final String SECRET = JobSecret.newSecretText();

    private static Vertx vertx;
    private static TcpStore store;

    @BeforeAll
    static void hostStore() throws Exception {
        vertx = Vertx.vertx();
        store = TcpStore.server(vertx, "127.0.0.1", 0, Duration.ofSeconds(60),
                JobSecret.of(SECRET.getBytes(StandardCharsets.UTF_8))).await(20, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopStore() throws Exception {
        try {
            if (store != null) {
                store.closeAsync().await(10, TimeUnit.SECONDS);
            }
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    private static Map<String, String> env(int rank, int worldSize, String job) {
        return env(rank, worldSize, job, Map.of());
    }

    /** The environment of rank {@code rank}, plus {@code extra}. */
    private static Map<String, String> env(int rank, int worldSize, String job, Map<String, String> extra) {
        Map<String, String> env = new HashMap<>(extra);
        env.putAll(base(rank, worldSize, job));
        return env;
    }

    private static Map<String, String> base(int rank, int worldSize, String job) {
        return Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", String.valueOf(store.port()),
                "TENSORBUS_STORE_HOSTED", "1", "RANK", String.valueOf(rank), "WORLD_SIZE", String.valueOf(worldSize),
                "TENSORBUS_CHECK_TIMEOUT_S", String.valueOf(GROUP_TIMEOUT.toSeconds()), JobSecret.ENV, SECRET,
                // One store serves every test: each job rendezvouses under its own group name.
                "TENSORBUS_CHECK_GROUP", job);
    }

    private static String outputs(List<ChildJvm> jvms) {
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < jvms.size(); r++) {
            b.append("--- rank ").append(r).append(' ').append(jvms.get(r)).append('\n').append(jvms.get(r).output());
        }
        return b.toString();
    }

    @Test
    void aRankKilledInTheMiddleOfA64MiBAllReduceFailsTheOthersNamingIt() throws Exception {
        rankTwoDiesAndTheOthersFailNamingIt("peer-loss", "STARTED allReduce 1");
    }

    @Test
    void aRankKilledInTheMiddleOfADdpBackwardPassFailsTheOthersNamingIt() throws Exception {
        rankTwoDiesAndTheOthersFailNamingIt("ddp-peer-loss", "STEP 3");
    }

    @Test
    void aRankKilledInTheMiddleOfAnOpenClAllReduceFailsTheOthersNamingIt() throws Exception {
        OpenClCheck.assumeOpenCl("the OpenCL peer-loss test");
        rankTwoDiesAndTheOthersFailNamingIt("peer-loss", "STARTED allReduce 1", r -> Map.of(
                "TENSORBUS_CHECK_BACKEND", "opencl", "TENSORBUS_CHECK_DEVICE", "opencl:0",
                "POCL_CACHE_DIR", OpenClCheck.poclCacheDir("peer-loss-rank" + r)));
    }

    private static void rankTwoDiesAndTheOthersFailNamingIt(String mode, String reached) throws Exception {
        rankTwoDiesAndTheOthersFailNamingIt(mode, reached, r -> Map.of());
    }

    /**
     * Runs {@link FaultCheck} {@code mode} on three JVMs, rank 2 the victim; {@code reached} is a survivor's line;
     * {@code extra} adds to each rank's environment.
     */
    private static void rankTwoDiesAndTheOthersFailNamingIt(String mode, String reached,
            IntFunction<Map<String, String>> extra) throws Exception {
        List<ChildJvm> jvms = new ArrayList<>();
        // Each test's job rendezvouses under its own name in the shared store.
        String job = mode + "-" + extra.apply(0).getOrDefault("TENSORBUS_CHECK_BACKEND", "tcp");
        try {
            for (int r = 0; r < 3; r++) {
                jvms.add(ChildJvm.start("rank-" + r, env(r, 3, job, extra.apply(r)), FaultCheck.class.getName(), mode,
                        "2"));
            }
            Integer victim = jvms.get(2).awaitExit(Duration.ofSeconds(60));
            long lostAt = System.nanoTime();
            assertNotNull(victim, "rank 2 did not halt\n" + outputs(jvms));
            assertEquals(FaultCheck.HALTED, victim, outputs(jvms));
            assertTrue(jvms.get(2).output().contains("HALTING"), outputs(jvms));
            for (int r = 0; r < 2; r++) {
                // Well within the group timeout: the lost connection is noticed, not waited out.
                long left = GROUP_TIMEOUT.toNanos() - (System.nanoTime() - lostAt);
                Integer code = jvms.get(r).awaitExit(Duration.ofNanos(Math.max(0, left)));
                assertNotNull(code, "rank " + r + " still ran " + GROUP_TIMEOUT + " after rank 2 died\n"
                        + outputs(jvms));
                assertEquals(FaultCheck.OP_FAILED, code, outputs(jvms));
                String o = jvms.get(r).output();
                assertTrue(o.contains(reached), o);
                assertTrue(o.contains("FAILED io.tensorbus.c10d.PeerLostException: "), outputs(jvms));
                String failure = o.lines().filter(l -> l.startsWith("FAILED ")).findFirst().orElseThrow();
                assertTrue(failure.contains("rank 2"), "the error does not name rank 2: " + failure);
            }
            assertNoSharedMemoryLeft(jvms);
            System.out.println(mode + ", as the JVMs saw it:\n" + outputs(jvms).lines()
                    .filter(l -> !l.startsWith("\t") && !l.startsWith("WARNING")).collect(Collectors.joining("\n")));
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }

    /**
     * The shared-memory channel and area files of {@code jvms} (named for the creating JVM's pid) that still exist:
     * the tcp backend deletes each as soon as its ranks mapped it, so none may outlive set-up, however the JVMs end.
     */
    private static void assertNoSharedMemoryLeft(List<ChildJvm> jvms) throws IOException {
        Path shm = Path.of("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return;
        }
        try (var files = Files.list(shm)) {
            List<String> left = files.map(f -> f.getFileName().toString())
                    .filter(n -> jvms.stream().anyMatch(j -> n.startsWith("tensorbus-" + j.pid() + "-")
                            || n.startsWith("tensorbus-area-" + j.pid() + "-"))).toList();
            assertEquals(List.of(), left, "channel files left in /dev/shm\n" + outputs(jvms));
        }
    }

    @Test
    void killingEveryRankInTheMiddleOfAnAllReduceLeavesNoSharedMemoryBehind() throws Exception {
        List<ChildJvm> jvms = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                // Victim 3 is no rank: all three run their 64 MiB allReduces until killed.
                jvms.add(ChildJvm.start("rank-" + r, env(r, 3, "kill-all"), FaultCheck.class.getName(), "peer-loss",
                        "3"));
            }
            for (ChildJvm j : jvms) {
                assertTrue(j.awaitOutput("STARTED allReduce 2", Duration.ofSeconds(60)), outputs(jvms));
            }
            for (ChildJvm j : jvms) {
                j.close(); // kill -9
            }
            for (ChildJvm j : jvms) {
                assertNotNull(j.awaitExit(Duration.ofSeconds(20)), outputs(jvms));
            }
            assertNoSharedMemoryLeft(jvms);
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }

    @Test
    void ranksThatExitNormallyLeaveNoSharedMemoryBehind() throws Exception {
        List<ChildJvm> jvms = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                jvms.add(ChildJvm.start("rank-" + r, env(r, 3, "normal-exit"), FaultCheck.class.getName(), "init"));
            }
            for (ChildJvm j : jvms) {
                assertEquals(0, j.awaitExit(GROUP_TIMEOUT.plusSeconds(30)), outputs(jvms));
                assertTrue(j.output().contains("INIT OK"), outputs(jvms));
            }
            assertNoSharedMemoryLeft(jvms);
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }

    @Test
    void aWorldSizeMismatchAtInitFailsBothJvmsNamingBothSizes() throws Exception {
        List<ChildJvm> jvms = new ArrayList<>();
        try {
            jvms.add(ChildJvm.start("rank-0", env(0, 2, "mismatch"), FaultCheck.class.getName(), "init"));
            jvms.add(ChildJvm.start("rank-1", env(1, 3, "mismatch"), FaultCheck.class.getName(), "init"));
            for (int r = 0; r < 2; r++) {
                Integer code = jvms.get(r).awaitExit(GROUP_TIMEOUT.plusSeconds(30));
                assertNotNull(code, "rank " + r + " did not exit\n" + outputs(jvms));
                assertNotEquals(0, code, outputs(jvms));
                assertEquals(FaultCheck.INIT_FAILED, code, outputs(jvms));
                String failure = jvms.get(r).output().lines().filter(l -> l.startsWith("INIT FAILED"))
                        .findFirst().orElse("");
                assertTrue(failure.contains("worldSize=2") && failure.contains("worldSize=3"),
                        "rank " + r + ": " + failure + "\n" + outputs(jvms));
            }
        } finally {
            jvms.forEach(ChildJvm::close);
        }
    }
}
