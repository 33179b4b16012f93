package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Distributed autograd's failures across JVMs ({@link DistAutogradFaultCheck}). */
class MultiJvmDistAutogradTest {
    private static final Pattern FAILED = Pattern.compile("BACKWARD FAILED ([\\d.]+) (.*)");

    @Test
    @Timeout(120)
    void aWorkerKilledDuringBackwardFailsItOnEverySurvivorNamingItAndLeavesNoContext() throws Exception {
        // Not through the launcher: it stops every rank when one dies, and the survivors must go on here.
        try (ChildJob job = ChildJob.start(3, DistAutogradFaultCheck.class.getName(), "killed")) {
            for (int r : new int[] {0, 2}) {
                Integer code = job.get(r).awaitExit(Duration.ofSeconds(90));
                String o = job.get(r).output();
                assertEquals(0, code, o);
                Matcher m = FAILED.matcher(o);
                assertTrue(m.find(), o);
                assertTrue(Double.parseDouble(m.group(1)) < 30, "within the 30 s deadline: " + o);
                assertTrue(m.group(2).contains("worker1"), "names the killed worker: " + o);
                assertTrue(o.contains("CONTEXTS 0"), "no context left on worker" + r + ":\n" + o);
            }
            assertTrue(job.get(1).output().contains("HALTING"), job.get(1).output());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"processes", "threads"})
    @Timeout(120)
    void aPeerOutsideAContextIsRefusedWithoutTouchingItAndNoGradientGoesMissing(String ranksAs) {
        String o = launch(ranksAs, 3, "meddle").out();
        assertTrue(o.contains("[rank 2] REFUSED 'tensorbus.dist_autograd.release' failed on worker worker1")
                && o.contains("may not release distributed autograd context 0:0"), o);
        assertTrue(o.contains("which went to worker worker1"), o);
        assertTrue(o.contains("no worker 900 in a job of 3"), o);
        assertTrue(!o.contains("UNEXPECTED"), o);
        assertTrue(o.contains("[rank 0] GRADIENTS OK"), o);
        // The seed's unused-RPC graph, made of builtins: FAST mode fails at once naming the unused RPC, SMART is exact.
        Matcher fast = Pattern.compile("\\[rank 0] FAST FAILED ([\\d.]+) (.*)").matcher(o);
        assertTrue(fast.find(), o);
        assertTrue(Double.parseDouble(fast.group(1)) < 5, "long before the 30 s timeout: " + o);
        assertTrue(fast.group(2).contains("no gradient came back for the arguments of 'builtin.mul' to worker1 (rank 1)"
                + " (recorded on worker0 (rank 0))") && fast.group(2).contains("SMART"), o);
        assertTrue(o.contains("[rank 0] SMART OK true"), o);
        assertTrue(o.contains("[rank 0] BUILTINS OK true"), "builtins recorded across JVMs: " + o);
        for (int r = 0; r < 3; r++) {
            assertTrue(o.contains("[rank " + r + "] CONTEXTS 0") && o.contains("[rank " + r + "] SHUTDOWN OK"), o);
        }
    }

    /**
     * Runs {@code world} workers of {@code mode} through the launcher, as {@code processes} or as rank
     * {@code threads} of one JVM, asserting that all succeeded.
     */
    private static LaunchResult launch(String ranksAs, int world, String mode) {
        List<String> args = new ArrayList<>(List.of("--nproc-per-node", String.valueOf(world), "--timeout", "100",
                DistAutogradFaultCheck.class.getName(), mode));
        if (ranksAs.equals("threads")) {
            args.addFirst("--ranks-as-threads");
        }
        LaunchResult result = LaunchResult.launch(args.toArray(String[]::new)).succeeded();
        assertEquals(ranksAs.equals("threads"), result.err().contains("with " + world + " rank thread(s)"),
                result.err());
        return result;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"processes", "threads"})
    @Timeout(120)
    void aCallThatReturnsAfterItsContextClosedIsDroppedWithALogLine(String ranksAs) {
        LaunchResult result = launch(ranksAs, 2, "late");
        String o = result.out();
        String e = result.err();
        assertTrue(o.contains("[rank 0] LATE ") && o.contains("released"), o);
        for (int r = 0; r < 2; r++) {
            assertTrue(o.contains("[rank " + r + "] CONTEXTS 0"), o);
            assertTrue(o.contains("[rank " + r + "] SHUTDOWN OK"), o);
        }
        assertTrue(e.contains("[rank 1] INFO: dropping the result of call"), e);
    }
}
