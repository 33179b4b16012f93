package io.tensorbus.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The flight recorder across JVMs: three launched ranks, the last of which skips a collective, each write their
 * dump when their operation fails, and {@code tensorbus fr-trace DIR} names that rank and the collective.
 */
class FlightRecorderTraceTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void frTraceNamesTheRankThatSkippedACollective() throws Exception {
        LaunchResult job = LaunchResult.launch("--nproc-per-node", "3", "--timeout", "60",
                SkipCheck.class.getName(), dir.toString());
        assertNotEquals(0, job.code(), job.toString());
        assertTrue(!job.out().contains("was not stopped"), job.toString());
        try (var dumps = Files.list(dir)) {
            assertTrue(dumps.count() >= 2, "dumps of the ranks that failed:\n" + job);
        }
        LaunchResult trace = LaunchResult.tensorbus("fr-trace", dir.toString());
        assertEquals(1, trace.code(), trace.toString());
        assertTrue(trace.out().contains("group 'default': collective #2 differs: rank(s) [0, 1] issued"
                + " allReduce(float32[8]), rank(s) [2] issued barrier(): rank(s) [2] skipped or reordered"
                + " allReduce(float32[8]) #2"), trace.toString() + "\n" + job);
    }
}
