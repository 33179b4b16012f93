package io.tensorbus.it.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.it.ChildJvm;
import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Elastic jobs across three hosts, torchrun's {@code --nnodes 2:3}: the main job with {@code --checkpoint-dir}
 * loses a host mid-training and finishes on the other two from its last checkpoint (hazelcast backend: no host's
 * loss ends the job); a host joining a running job is admitted at the next round, and the loss of the c10d
 * endpoint's host ends the job with a message that says so.
 */
@ExtendWith(NetworkHostsAvailable.class)
class ElasticTest {
    private static final Pattern ACCURACY = Pattern.compile("(?m)^\\[rank 0\\] test accuracy ([\\d.]+)%$");

    private static List<String> elastic(HostJob job, String backend, String endpoint, String... target) {
        List<String> args = new ArrayList<>(List.of("--nnodes", "2:3", "--nproc-per-node", "1", "--rdzv-backend",
                backend, "--rdzv-endpoint", endpoint, "--rdzv-id", "elastic-test", "--rdzv-conf",
                "join_timeout=15,last_call_timeout=2", "--max-restarts", "2", "--timeout", "150"));
        args.addAll(List.of(target));
        return args;
    }

    private static String[] training(Path checkpoints, int epochs) {
        return new String[] {"ddp-fashion-mnist", "--epochs", String.valueOf(epochs), "--limit", "2560",
            "--checkpoint-dir", checkpoints.toString()};
    }

    private static double accuracy(String output, String report) {
        Matcher m = ACCURACY.matcher(output);
        assertTrue(m.find(), "a test accuracy line:\n" + report);
        return Double.parseDouble(m.group(1));
    }

    /** The number of the last round of {@code nodes} nodes that {@code output} started. */
    private static int round(String output, int nodes, String report) {
        Matcher m = Pattern.compile("round (\\d+): " + nodes + " node\\(s\\)").matcher(output);
        int round = -1;
        while (m.find()) {
            round = Integer.parseInt(m.group(1));
        }
        assertTrue(round >= 0, "no round of " + nodes + " nodes\n" + report);
        return round;
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aHostLostMidTrainingLeavesTheOthersToFinishFromTheLastCheckpoint(@TempDir Path dir) throws Exception {
        Path reference = Files.createDirectory(dir.resolve("reference"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = Launcher.run(List.of(concat(new String[] {"--nproc-per-node", "3"}, training(reference, 3))),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream(), true,
                        StandardCharsets.UTF_8));
        String uninterrupted = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, uninterrupted);
        Path checkpoints = Files.createDirectory(dir.resolve("elastic"));
        try (HostJob job = HostJob.create(3)) {
            String seeds = job.hosts().address(0) + ":29720," + job.hosts().address(1) + ":29720,"
                    + job.hosts().address(2) + ":29720";
            for (int k = 0; k < 3; k++) {
                job.launch(k, elastic(job, "hazelcast", seeds, training(checkpoints, 3)));
            }
            ChildJvm first = job.launches().get(0);
            ChildJvm next = job.launches().get(1);
            assertTrue(first.awaitOutput("[rank 0] epoch 1/3", Duration.ofSeconds(120)), job.report());
            // Rank 0 saves the epoch's checkpoint right after it prints the epoch's line.
            Thread.sleep(1000);
            job.hosts().cut(0);
            long cut = System.nanoTime();
            Integer c1 = next.awaitExit(Duration.ofSeconds(150));
            Integer c2 = job.launches().get(2).awaitExit(Duration.ofSeconds(30));
            List<Integer> codes = job.awaitAll(Duration.ofSeconds(45));
            String report = job.report();
            assertEquals(0, c1, report);
            assertEquals(0, c2, report);
            assertNotNull(codes.get(0), "the cut-off host ends too\n" + report);
            assertNotEquals(0, codes.get(0), report);
            String o = next.output();
            // The round of three the cut broke: the first, or a later one when two nodes met before the third came.
            int broken = round(o, 3, report);
            assertTrue(o.contains("round " + (broken + 1) + ": 2 node(s)"), report);
            assertTrue(o.contains("[rank 0] resumed from the checkpoint in " + checkpoints + " after epoch 1"), report);
            assertTrue(o.contains("2 rank(s) x batch 64 (global 128)"), report);
            double got = accuracy(o, report);
            double want = accuracy(uninterrupted, uninterrupted);
            assertTrue(Math.abs(got - want) <= 1.0, "accuracy " + got + "% against " + want + "% uninterrupted\n"
                    + report);
            long stopped = next.firstTime("stopped the ranks of round " + broken);
            long admitted = next.firstTime("round " + (broken + 1) + ": 2 node(s)");
            long training = next.firstTime("[rank 0] resumed from the checkpoint");
            System.out.println("[tensorbus] node loss to training again: " + seconds(training - cut) + " (noticed "
                    + seconds(stopped - cut) + ", rendezvous " + seconds(admitted - stopped) + ", ranks restarted and"
                    + " resumed " + seconds(training - admitted) + "); accuracy " + got + "% against " + want
                    + "% uninterrupted");
            assertTrue(job.nothingRuns(), "nothing left running\n" + report);
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aJoiningHostIsAdmittedAtTheNextRoundAndLosingTheC10dEndpointEndsTheJob(@TempDir Path dir)
            throws Exception {
        Path checkpoints = Files.createDirectory(dir.resolve("elastic"));
        try (HostJob job = HostJob.create(3)) {
            String endpoint = job.hosts().address(0) + ":29730";
            job.launch(0, elastic(job, "c10d", endpoint, training(checkpoints, 30)));
            job.launch(1, elastic(job, "c10d", endpoint, training(checkpoints, 30)));
            ChildJvm first = job.launches().get(0);
            assertTrue(first.awaitOutput("[rank 0] epoch 1/30", Duration.ofSeconds(120)), job.report());
            assertTrue(first.output().contains("round 0: 2 node(s)"), job.report());
            ChildJvm late = job.launch(2, elastic(job, "c10d", endpoint, training(checkpoints, 30)));
            assertTrue(first.awaitOutput("round 1: 3 node(s)", Duration.ofSeconds(60)), job.report());
            assertTrue(first.awaitOutput("3 rank(s) x batch 42", Duration.ofSeconds(60)), job.report());
            assertTrue(late.output().contains("round 1: 3 node(s)"), job.report());
            job.hosts().cut(0);
            Integer c1 = job.launches().get(1).awaitExit(Duration.ofSeconds(60));
            Integer c2 = late.awaitExit(Duration.ofSeconds(30));
            String report = job.report();
            assertNotNull(c1, report);
            assertNotNull(c2, report);
            assertNotEquals(0, c1, report);
            assertNotEquals(0, c2, report);
            for (ChildJvm l : List.of(job.launches().get(1), late)) {
                assertTrue(l.output().contains("tensorbus launch: failed: lost the rendezvous: the store stopped"
                        + " answering"), "says the rendezvous store is gone:\n" + report);
            }
            // The endpoint's own host ends after the join timeout (the first test shows a cut-off host ending).
            assertEquals(List.of(), job.hosts().pids(1), "nothing left running on host 1\n" + report);
            assertEquals(List.of(), job.hosts().pids(2), "nothing left running on host 2\n" + report);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = new String[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
