package io.tensorbus.it.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.it.CollectivesCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Jobs across hosts: two network namespaces with their own addresses ({@link NetworkHosts}), a launcher on each as
 * a user runs them on two machines ({@code --nnodes 2 --node-rank K --master-addr HOST0}), sharing a secret file.
 */
@ExtendWith(NetworkHostsAvailable.class)
class MultiHostTest {
    private static final int PORT = 29611;
    private static Path secretFile;

    @BeforeAll
    static void secret(@TempDir Path dir) throws IOException {
        secretFile = dir.resolve("secret");
        Files.writeString(secretFile, JobSecret.newSecretText());
        Files.setPosixFilePermissions(secretFile, PosixFilePermissions.fromString("rw-------"));
    }

    @AfterAll
    static void noSecretLeft() throws IOException {
        Files.deleteIfExists(secretFile);
    }

    private static Map<String, String> env() {
        return Map.of(JobSecret.FILE_ENV, secretFile.toString(), "TENSORBUS_SETUP_TIMEOUT", "60");
    }

    /** Starts a launcher on each of {@code hosts} with {@code nproc} ranks each running {@code target}. */
    private static List<HostLaunch> launchEverywhere(NetworkHosts hosts, int nproc, List<String> target)
            throws IOException {
        List<HostLaunch> launches = new ArrayList<>();
        for (int k = 0; k < hosts.count(); k++) {
            List<String> args = new ArrayList<>(HostLaunch.nodeOptions(hosts, hosts.count(), k, nproc, PORT));
            args.addAll(target);
            launches.add(HostLaunch.start(hosts, k, env(), args));
        }
        return launches;
    }

    /** Every launcher's exit status, once all ended (null for one still running at the deadline). */
    private static List<Integer> awaitAll(List<HostLaunch> launches, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        List<Integer> codes = new ArrayList<>();
        for (HostLaunch l : launches) {
            codes.add(l.awaitExit(Duration.ofNanos(Math.max(0, end - System.nanoTime()))));
        }
        return codes;
    }

    private static String report(List<HostLaunch> launches) {
        StringBuilder b = new StringBuilder();
        launches.forEach(l -> b.append("--- ").append(l).append('\n'));
        return b.toString();
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void everyCollectiveAgreesOnTwoHostsOfTwoRanks() throws Exception {
        try (NetworkHosts hosts = NetworkHosts.create(2)) {
            List<HostLaunch> launches = launchEverywhere(hosts, 2, List.of("--timeout", "120",
                    CollectivesCheck.class.getName(), "30"));
            List<Integer> codes = awaitAll(launches, Duration.ofSeconds(130));
            assertEquals(List.of(0, 0), codes, report(launches));
            for (int rank = 0; rank < 4; rank++) {
                String o = launches.get(rank / 2).output();
                Matcher m = Pattern.compile("(?m)^\\[rank " + rank + "\\] CHECK OK (\\d+) ops \\(rank " + rank
                        + " of 4\\)$").matcher(o);
                assertTrue(m.find(), "no CHECK OK line of rank " + rank + "\n" + report(launches));
                assertTrue(Integer.parseInt(m.group(1)) > 100, report(launches));
            }
            assertTrue(launches.get(0).output().contains("rendezvous store at " + hosts.address(0) + ":" + PORT
                    + " (hosted by this launcher)"), report(launches));
            for (int k = 0; k < 2; k++) {
                assertEquals(List.of(), hosts.pids(k), "nothing left running on host " + k);
            }
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRankFailingDuringSetUpEndsBothHostsLaunchersWithinTenSeconds() throws Exception {
        try (NetworkHosts hosts = NetworkHosts.create(2)) {
            // Rank 3 (host 1) names an address of no host here: its backend cannot listen, so its set-up fails.
            List<HostLaunch> launches = new ArrayList<>();
            launches.add(HostLaunch.start(hosts, 0, env(), concat(HostLaunch.nodeOptions(hosts, 2, 0, 2, PORT),
                    SetupFailCheck.class.getName())));
            launches.add(HostLaunch.start(hosts, 1, env(), concat(HostLaunch.nodeOptions(hosts, 2, 1, 2, PORT),
                    SetupFailCheck.class.getName(), "3")));
            assertTrue(launches.get(1).awaitOutput("SETUP FAILING", Duration.ofSeconds(60)), report(launches));
            long failed = System.nanoTime();
            List<Integer> codes = awaitAll(launches, Duration.ofSeconds(30));
            String report = report(launches);
            assertNotNull(codes.get(0), report);
            assertNotNull(codes.get(1), report);
            assertTrue(codes.get(0) != 0 && codes.get(1) != 0, report);
            for (HostLaunch l : launches) {
                assertTrue(l.endNanos() - failed < TimeUnit.SECONDS.toNanos(10), "ended "
                        + (l.endNanos() - failed) / 1e9 + " s after the failure\n" + report);
            }
            assertTrue(launches.get(0).output().contains("rank 3"), "host 0 names rank 3:\n" + report);
            assertTrue(launches.get(0).output().contains("203.0.113.7"), "and its cause:\n" + report);
            for (int k = 0; k < 2; k++) {
                assertEquals(List.of(), hosts.pids(k), "nothing left running on host " + k);
            }
        }
    }

    private static List<String> concat(List<String> a, String... b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(List.of(b));
        return all;
    }
}
