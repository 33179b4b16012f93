package io.tensorbus.it.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Faults across hosts, on two hosts of two ranks all-reducing over and over ({@link PartitionCheck}): a cable
 * pulled (no FIN, no RST: the peers only see silence); a cable pulled and plugged back within the timeout, then
 * the processes of one host all killed.
 */
@ExtendWith(NetworkHostsAvailable.class)
class MultiHostFaultTest {
    private static final Pattern FAILED = Pattern.compile("(?m)^\\[rank ([01])\\] FAILED (\\d+) (.*)$");

    /** Starts the job on both hosts and waits until every rank has done {@code iterations} all-reduces. */
    private static void startAndAwait(HostJob job, int timeoutSeconds, int mib, int iterations, int warm)
            throws Exception {
        job.launchEverywhere(2, List.of(), List.of(PartitionCheck.class.getName(), String.valueOf(timeoutSeconds),
                String.valueOf(mib), String.valueOf(iterations)));
        for (int rank = 0; rank < 4; rank++) {
            assertTrue(job.launches().get(rank / 2).awaitOutput("[rank " + rank + "] ITER " + warm + " OK",
                    Duration.ofSeconds(90)), job.report());
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void aPartitionDuringA64MiBAllReduceFailsTheSurvivorsNamingTheUnreachableRanks() throws Exception {
        int timeout = 6;
        try (HostJob job = HostJob.create(2)) {
            startAndAwait(job, timeout, 64, 0, 1);
            job.hosts().cut(1);
            long cut = System.currentTimeMillis();
            List<Integer> codes = job.awaitAll(Duration.ofSeconds(timeout + 40));
            String report = job.report();
            assertNotNull(codes.get(0), report);
            assertNotNull(codes.get(1), report);
            assertNotEquals(0, codes.get(0), report);
            assertNotEquals(0, codes.get(1), report);
            Matcher m = FAILED.matcher(job.launches().get(0).output());
            assertTrue(m.find(), "a survivor on host 0 failed:\n" + report);
            long after = Long.parseLong(m.group(2)) - cut;
            assertTrue(after <= (timeout + 5) * 1000L, "failed " + after + " ms after the cut\n" + report);
            assertTrue(m.group(3).contains("2") && m.group(3).contains("3"), "names ranks 2 and 3: " + m.group(3));
            assertFalse(report.contains("WRONG"), report);
            assertTrue(job.nothingRuns(), "nothing left running\n" + report);
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void aFlapLeavesEveryResultRightAndAHostWhoseProcessesAreKilledEndsTheOtherHostsJob() throws Exception {
        try (HostJob job = HostJob.create(2)) {
            startAndAwait(job, 30, 16, 0, 1);
            job.hosts().cut(1);
            Thread.sleep(2000);
            job.hosts().reconnect(1);
            long reconnected = System.nanoTime();
            // TCP rides out an outage this short: the all-reduces go on, every element of every result checked.
            int after = 0;
            for (int rank = 0; rank < 4; rank++) {
                String o = job.launches().get(rank / 2).output();
                Matcher last = Pattern.compile("\\[rank " + rank + "\\] ITER (\\d+) OK").matcher(o);
                while (last.find()) {
                    after = Math.max(after, Integer.parseInt(last.group(1)));
                }
            }
            for (int rank = 0; rank < 4; rank++) {
                assertTrue(job.launches().get(rank / 2).awaitOutput("[rank " + rank + "] ITER " + (after + 3) + " OK",
                        Duration.ofSeconds(60)), "all-reduces go on after the flap:\n" + job.report());
            }
            assertFalse(job.report().contains("WRONG"), job.report());
            assertFalse(job.report().contains("FAILED"), job.report());
            System.out.println("[tensorbus] all-reducing again " + (System.nanoTime() - reconnected) / 1_000_000
                    + " ms after a 2 s flap");
            job.hosts().killAll(1);
            long killed = System.nanoTime();
            Integer code = job.launches().get(0).awaitExit(Duration.ofSeconds(40));
            String report = job.report();
            assertNotNull(code, report);
            assertNotEquals(0, code, report);
            long took = job.launches().get(0).endNanos() - killed;
            assertTrue(took < TimeUnit.SECONDS.toNanos(15), "host 0 ended " + took / 1e9 + " s after the kill\n"
                    + report);
            Matcher m = FAILED.matcher(job.launches().get(0).output());
            assertTrue(m.find(), report);
            assertTrue(m.group(3).matches(".*rank [23].*"), "names a lost rank: " + m.group(3));
            assertEquals(List.of(), job.hosts().pids(0), "nothing left running on host 0\n" + report);
        }
    }
}
