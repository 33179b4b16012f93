package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Programs that end as README writes them ({@code finally { agent.shutdown(); }}) end promptly when a worker dies,
 * started by hand and by the launcher, and a rank told to stop (SIGTERM) ends within moments ({@link ShutdownCheck}).
 */
class ShutdownTest {
    private static final long TEN_SECONDS = TimeUnit.SECONDS.toNanos(10);

    @Test
    @Timeout(120)
    void aStageKilledDuringAPipelineLoopEndsEveryJvmWithinTenSecondsAndTheMasterNamesIt() throws Exception {
        try (ChildJob job = ChildJob.start(3, ShutdownCheck.class.getName(), "pipeline")) {
            assertTrue(job.get(2).awaitOutput("HALTING", Duration.ofSeconds(90)), job.get(2).output());
            long halted = job.get(2).firstTime("HALTING");
            for (int r : new int[] {0, 1}) {
                Integer code = job.get(r).awaitExit(Duration.ofSeconds(20));
                String o = job.get(r).output();
                assertNotNull(code, "worker" + r + " still runs 20 s after worker2 died:\n" + o);
                assertTrue(code != 0, "worker" + r + ":\n" + o + "\nworker0:\n" + job.get(0).output());
                assertTrue(job.get(r).endNanos() - halted < TEN_SECONDS, "worker" + r + " ended "
                        + (job.get(r).endNanos() - halted) / 1e9 + " s after worker2 died:\n" + o);
            }
            String master = job.get(0).output();
            assertTrue(master.contains("STEP 2 OK") && !master.contains("STEP 3 OK"), master);
            // Its step failed naming worker2; the shutdown in finally then fails at once naming it too.
            assertTrue(master.contains("Exception in thread \"main\"") && master.contains("worker worker2 (rank 2)"),
                    master);
            String stage = job.get(1).output();
            assertTrue(stage.contains("the graceful shutdown of worker1 (rank 1) failed after")
                    && stage.contains("worker worker2 (rank 2)"), stage);
        }
    }

    @Test
    @Timeout(120)
    void theSameJobUnderTheLauncherEndsWithoutKillingARankAndNamesTheOneThatDied() {
        long t0 = System.nanoTime();
        LaunchResult r = LaunchResult.launch("--nproc-per-node", "3", "--timeout", "100",
                ShutdownCheck.class.getName(), "pipeline");
        assertTrue(r.code() != 0, r.toString());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(60), r.toString());
        assertTrue(r.out().contains("[rank 2] HALTING"), r.toString());
        assertFalse(r.err().contains("killing it"), "every rank ended on SIGTERM:\n" + r);
        String last = r.err().strip().lines().reduce((a, b) -> b).orElse("");
        assertTrue(last.startsWith("tensorbus launch: failed: rank 2 "), last + "\n" + r);
    }

    @Test
    @Timeout(60)
    void sigtermEndsARankWaitingInAGracefulShutdownWithinTwoSecondsWithStatus143() throws Exception {
        try (ChildJob job = ChildJob.start(2, ShutdownCheck.class.getName(), "busy")) {
            assertTrue(job.get(0).awaitOutput("SHUTTING DOWN", Duration.ofSeconds(40)), job.get(0).output());
            Thread.sleep(500);
            long t0 = System.nanoTime();
            job.get(0).process().destroy();
            Integer code = job.get(0).awaitExit(Duration.ofSeconds(10));
            assertEquals(143, code, job.get(0).output());
            assertTrue(job.get(0).endNanos() - t0 < TimeUnit.SECONDS.toNanos(2), "ended "
                    + (job.get(0).endNanos() - t0) / 1e9 + " s after SIGTERM:\n" + job.get(0).output());
        }
    }
}
