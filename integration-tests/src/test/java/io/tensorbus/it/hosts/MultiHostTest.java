package io.tensorbus.it.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.it.ChildJvm;
import io.tensorbus.it.CollectivesCheck;
import io.tensorbus.it.LoopbackRuns;
import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Jobs across hosts: network namespaces with their own addresses ({@link NetworkHosts}), a launcher on each as a
 * user runs them on several machines ({@code --nnodes N --node-rank K --master-addr HOST0}), sharing a secret
 * file; every collective, the main job and the two RPC workloads, with the results of the same job on loopback.
 */
@ExtendWith(NetworkHostsAvailable.class)
class MultiHostTest {
    /** The lines of a training run that must not depend on where its ranks ran: losses and the accuracy. */
    private static final Pattern RESULTS = Pattern.compile("(?m)^\\[rank 0\\] (?:epoch \\d+/\\d+  loss [\\d.]+|test"
            + " accuracy [\\d.]+%)");

    private static List<String> results(String output) {
        List<String> lines = new ArrayList<>();
        Matcher m = RESULTS.matcher(output);
        while (m.find()) {
            lines.add(m.group());
        }
        return lines;
    }

    /** {@code tensorbus launch ARGS} on loopback, in this JVM; its stdout once it succeeded. */
    private static String onLoopback(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, o + err.toString(StandardCharsets.UTF_8));
        return o;
    }

    /** Runs {@code target} on {@code job}'s hosts, {@code nproc} ranks each; all rank 0's output once all succeeded. */
    private static String acrossHosts(HostJob job, int nproc, Duration limit, String... target) throws Exception {
        job.launchEverywhere(nproc, List.of("--timeout", String.valueOf(limit.toSeconds())), List.of(target));
        List<Integer> codes = job.awaitAll(limit.plusSeconds(10));
        List<Integer> zeros = new ArrayList<>();
        codes.forEach(c -> zeros.add(0));
        assertEquals(zeros, codes, job.report());
        assertTrue(job.nothingRuns(), "nothing left running\n" + job.report());
        return job.launches().get(0).output();
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void everyCollectiveAgreesOnTwoHostsOfTwoRanks() throws Exception {
        try (HostJob job = HostJob.create(2)) {
            acrossHosts(job, 2, Duration.ofSeconds(120), CollectivesCheck.class.getName(), "30");
            for (int rank = 0; rank < 4; rank++) {
                Matcher m = Pattern.compile("(?m)^\\[rank " + rank + "\\] CHECK OK (\\d+) ops \\(rank " + rank
                        + " of 4\\)$").matcher(job.launches().get(rank / 2).output());
                assertTrue(m.find(), "no CHECK OK line of rank " + rank + "\n" + job.report());
                assertTrue(Integer.parseInt(m.group(1)) > 100, job.report());
            }
            assertTrue(job.launches().get(0).output().contains("rendezvous store at " + job.hosts().address(0) + ":"
                    + HostJob.PORT + " (hosted by this launcher)"), job.report());
        }
    }

    /**
     * Runs {@code job} on loopback with 4 ranks, then on 2 hosts of 2 ranks; the losses and accuracy must agree (the
     * workload is deterministic); rank 0's output on the hosts must contain {@code shape}.
     */
    private static void sameResultsAcrossHostsAsOnLoopback(String shape, Duration limit, String... job)
            throws Exception {
        List<String> loopback = results(onLoopback(concat(new String[] {"--nproc-per-node", "4"}, job)));
        assertEquals(2, loopback.size(), loopback.toString());
        try (HostJob hosts = HostJob.create(2)) {
            String o = acrossHosts(hosts, 2, limit, job);
            assertTrue(o.contains(shape), hosts.report());
            assertEquals(loopback, results(o), hosts.report());
        }
    }

    @Test
    @Timeout(value = 200, unit = TimeUnit.SECONDS)
    void theMainJobTrainsOnTwoHostsOfTwoRanksAsOnLoopback() throws Exception {
        sameResultsAcrossHostsAsOnLoopback("4 rank(s) x batch 32 (global 128)", Duration.ofSeconds(90),
                "ddp-fashion-mnist", "--epochs", "1", "--limit", "640");
    }

    @Test
    @Timeout(value = 200, unit = TimeUnit.SECONDS)
    void theParameterServerMeetsOverHazelcastAcrossTwoHostsAsOnLoopback() throws Exception {
        // The server on one host, its trainer on the other. On loopback: the run MultiJvmParameterServerTest checks
        // (under the legacy launcher; the results do not depend on the launcher), made once for both.
        List<String> loopback = results(LoopbackRuns.output(LoopbackRuns.PARAMETER_SERVER));
        assertEquals(2, loopback.size(), loopback.toString());
        try (HostJob hosts = HostJob.create(2)) {
            String o = acrossHosts(hosts, 1, Duration.ofSeconds(120), LoopbackRuns.PARAMETER_SERVER.target()
                    .toArray(String[]::new));
            assertTrue(o.contains("1 trainer(s)"), hosts.report());
            assertEquals(loopback, results(o), hosts.report());
        }
    }

    @Test
    @Timeout(value = 200, unit = TimeUnit.SECONDS)
    void thePipelineRunsItsStagesOnThreeHostsAsOnLoopback() throws Exception {
        String[] job = LoopbackRuns.PIPELINE.target().toArray(String[]::new);
        Pattern loss = Pattern.compile("(?m)^\\[rank 0] micro-batches 2: loss of the last batch [\\d.]+$");
        // The same run MultiJvmPipelineTest checks: made once for both.
        Matcher onLoopback = loss.matcher(LoopbackRuns.output(LoopbackRuns.PIPELINE));
        assertTrue(onLoopback.find(), "a loss line on loopback");
        try (HostJob hosts = HostJob.create(3)) {
            String o = acrossHosts(hosts, 1, Duration.ofSeconds(120), job);
            assertTrue(Pattern.compile("(?m)^\\[rank 0] pipeline gpipe batch=4 img=32 micro_batches=2"
                    + " s_per_batch=\\d+\\.\\d{3}$").matcher(o).find(), hosts.report());
            assertTrue(o.contains(onLoopback.group()), "the loss of loopback, " + onLoopback.group() + "\n"
                    + hosts.report());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRankFailingDuringSetUpEndsBothHostsLaunchersWithinTenSeconds() throws Exception {
        try (HostJob job = HostJob.create(2)) {
            // Rank 3 (host 1) is told to listen on an address of no host here, so its set-up fails.
            job.launch(0, 2, List.of(), List.of(SetupFailCheck.class.getName()));
            ChildJvm failing = job.launch(1, 2, List.of(), List.of(SetupFailCheck.class.getName(), "3"));
            assertTrue(failing.awaitOutput("SETUP FAILING", Duration.ofSeconds(60)), job.report());
            long failed = System.nanoTime();
            List<Integer> codes = job.awaitAll(Duration.ofSeconds(30));
            assertNotNull(codes.get(0), job.report());
            assertNotNull(codes.get(1), job.report());
            assertTrue(codes.get(0) != 0 && codes.get(1) != 0, job.report());
            for (ChildJvm l : job.launches()) {
                assertTrue(l.endNanos() - failed < TimeUnit.SECONDS.toNanos(10), "ended "
                        + (l.endNanos() - failed) / 1e9 + " s after the failure\n" + job.report());
            }
            // Host 0 hears of it either from its own ranks (the set-up failure key) or from node 1's
            // launcher, whichever is first; both name the rank and the cause.
            String host0 = job.launches().get(0).output();
            assertTrue(Pattern.compile("rank 3 \\(.*: rank 3 of group 'default' cannot listen on 203\\.0\\.113\\.7")
                    .matcher(host0).find(), "host 0 names rank 3 and its cause:\n" + job.report());
            assertTrue(job.nothingRuns(), "nothing left running\n" + job.report());
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = new String[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
