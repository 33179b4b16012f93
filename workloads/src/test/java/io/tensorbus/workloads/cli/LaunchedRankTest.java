package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class LaunchedRankTest {
    private static final LaunchOptions TWO = LaunchOptions.parse(List.of("--nproc-per-node", "2", "a.B", "x"));

    @Test
    void ranksWithOneCoreEachRunTheSerialCollector() {
        List<String> cmd = LaunchedRank.command(TWO, null, 2);
        assertTrue(cmd.contains("-XX:+UseSerialGC"), cmd.toString());
        assertEquals(List.of("a.B", "x"), cmd.subList(cmd.size() - 2, cmd.size()));
    }

    @Test
    void ranksWithSeveralCoresKeepTheDefaultCollector() {
        assertFalse(LaunchedRank.command(TWO, null, 8).contains("-XX:+UseSerialGC"));
    }

    @Test
    void theUsersJvmOptionsComeBeforeTheClassPathAndTheirCollectorWins() {
        List<String> cmd = LaunchedRank.command(TWO, "  -Xmx1g   -XX:+UseG1GC ", 2);
        assertFalse(cmd.contains("-XX:+UseSerialGC"), cmd.toString());
        assertTrue(cmd.indexOf("-XX:+UseG1GC") < cmd.indexOf("-cp"), cmd.toString());
        assertTrue(cmd.contains("-Xmx1g"), cmd.toString());
    }
}
