package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LaunchedRankTest {
    private static final LaunchOptions TWO = LaunchOptions.parse(List.of("--nproc-per-node", "2", "a.B", "x"));
    private static final LaunchTarget TARGET = new LaunchTarget("a.B", "", List.of("x"), List.of());

    @Test
    void ranksWithOneCoreEachRunTheSerialCollector() {
        List<String> cmd = LaunchedRank.command(TWO, TARGET, null, 2);
        assertTrue(cmd.contains("-XX:+UseSerialGC"), cmd.toString());
        assertTrue(cmd.contains("-Xmn8m"), "a small young generation: " + cmd);
        assertEquals(List.of("a.B", "x"), cmd.subList(cmd.size() - 2, cmd.size()));
    }

    @Test
    void ranksAsThreadsOfOneJvmGetTheirYoungGenerationsAndTheNodesMemoryTogether() {
        LaunchOptions threads = LaunchOptions.parse(List.of("--ranks-as-threads", "--nproc-per-node", "2", "a.B"));
        List<String> cmd = LaunchedRank.command(threads, TARGET.asRankThreads(), null, 2, Map.of());
        assertTrue(cmd.contains("-XX:+UseSerialGC") && cmd.contains("-Xmn16m"), cmd.toString());
        assertTrue(cmd.contains("-XX:MaxRAMPercentage=25.000"), "one JVM's share of the heap: " + cmd);
        assertEquals(List.of(RankThreads.class.getName(), "a.B", "x"), cmd.subList(cmd.size() - 3, cmd.size()));
    }

    @Test
    void ranksShareTheNodesMemoryAndTheUsersHeapSizeComesAfter() {
        assertEquals(List.of("-XX:MaxRAMPercentage=12.500", "-Dtensorbus.hostMemoryBytes=" + (6L << 30),
                "-XX:TrimNativeHeapInterval=1000"), LaunchedRank.memoryFlags(2, 16L << 30));
        assertEquals(List.of("-XX:MaxRAMPercentage=25.000", "-Dtensorbus.hostMemoryBytes=" + (3L << 30),
                "-XX:TrimNativeHeapInterval=1000"), LaunchedRank.memoryFlags(1, 4L << 30));
        List<String> cmd = LaunchedRank.command(TWO, TARGET, "-Xmx1g -Dtensorbus.hostMemoryBytes=1", 2);
        int share = cmd.indexOf(cmd.stream().filter(f -> f.startsWith("-XX:MaxRAMPercentage=")).findFirst()
                .orElseThrow());
        assertTrue(share < cmd.indexOf("-Xmx1g") && share < cmd.indexOf("-Dtensorbus.hostMemoryBytes=1"),
                cmd.toString());
    }

    @Test
    void theUsersYoungGenerationSizeWins() {
        for (String opt : List.of("-Xmn64m", "-XX:NewSize=32m", "-XX:MaxNewSize=128m")) {
            List<String> cmd = LaunchedRank.command(TWO, TARGET, opt, 2);
            assertTrue(cmd.contains("-XX:+UseSerialGC") && cmd.contains(opt), cmd.toString());
            assertFalse(cmd.contains("-Xmn8m"), cmd.toString());
        }
    }

    @Test
    void ranksRunWithoutProfiledLoopPredicationUnlessTheUserTurnsItBackOn() {
        List<String> plain = LaunchedRank.command(TWO, TARGET, null, 8);
        assertTrue(plain.contains("-XX:-UseProfiledLoopPredicate"), plain.toString());
        List<String> cmd = LaunchedRank.command(TWO, TARGET, "-XX:+UseProfiledLoopPredicate", 8);
        // The JVM takes the last occurrence of a flag: the user's comes after tensorbus's.
        assertTrue(cmd.indexOf("-XX:-UseProfiledLoopPredicate") < cmd.indexOf("-XX:+UseProfiledLoopPredicate"),
                cmd.toString());
    }

    @Test
    void ranksWithSeveralCoresKeepTheDefaultCollector() {
        assertFalse(LaunchedRank.command(TWO, TARGET, null, 8).contains("-XX:+UseSerialGC"));
        assertFalse(LaunchedRank.command(TWO, TARGET, null, 8).contains("-Xmn8m"));
    }

    @Test
    void theUsersJvmOptionsComeBeforeTheClassPathAndTheirCollectorWins() {
        List<String> cmd = LaunchedRank.command(TWO, TARGET, "  -Xmx1g   -XX:+UseG1GC ", 2);
        assertFalse(cmd.contains("-XX:+UseSerialGC"), cmd.toString());
        assertTrue(cmd.indexOf("-XX:+UseG1GC") < cmd.indexOf("-cp"), cmd.toString());
        assertTrue(cmd.contains("-Xmx1g"), cmd.toString());
    }

    @Test
    void theUsersClassPathComesBeforeTensorbussOwn() {
        List<String> cmd = LaunchedRank.command(TWO, new LaunchTarget("a.B", "/app/classes", List.of(), List.of()),
                null, 8);
        String cp = cmd.get(cmd.indexOf("-cp") + 1);
        assertTrue(cp.startsWith("/app/classes" + File.pathSeparator), cp);
        assertTrue(cp.endsWith(System.getProperty("java.class.path")), cp);
    }

    @Test
    void aJarsManifestFlagsComeBeforeTheUsersOptions() {
        LaunchTarget jar = new LaunchTarget("a.B", "app.jar", List.of(), List.of("--add-opens",
                "java.base/java.lang=ALL-UNNAMED"));
        List<String> cmd = LaunchedRank.command(TWO, jar, "-Xmx1g", 8);
        assertTrue(cmd.indexOf("--add-opens") >= 0 && cmd.indexOf("--add-opens") < cmd.indexOf("-Xmx1g"),
                cmd.toString());
        assertEquals("java.base/java.lang=ALL-UNNAMED", cmd.get(cmd.indexOf("--add-opens") + 1));
    }

    @Test
    void aClassPathInTheJvmOptionsIsRefusedNamingTheOptionToUse() {
        for (String opts : List.of("-Xmx1g -cp /x", "-classpath /x", "--class-path /x", "-jar a.jar")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> LaunchedRank.command(TWO, TARGET, opts, 8));
            assertTrue(e.getMessage().contains("TENSORBUS_JVM_OPTS") && e.getMessage().contains("--classpath"),
                    e.getMessage());
        }
    }
}
