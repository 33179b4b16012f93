package io.tensorbus.it.hosts;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.it.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A job across {@link NetworkHosts} as a user runs one on several machines: a secret file shared by every host
 * (made here, 0600), and on each host a launcher with {@code --nnodes N --node-rank K --master-addr HOST0}. Close it
 * to kill what runs, remove the hosts and the secret.
 */
public final class HostJob implements AutoCloseable {
    /** The master port of every job here. */
    public static final int PORT = 29611;

    private final NetworkHosts hosts;
    private final Path secretFile;
    private final List<ChildJvm> launches = new ArrayList<>();

    private HostJob(NetworkHosts hosts, Path secretFile) {
        this.hosts = hosts;
        this.secretFile = secretFile;
    }

    /** Makes {@code count} hosts and a secret file for them. */
    public static HostJob create(int count) throws IOException {
        Path secret = Files.createTempFile("tensorbus-hosts-", ".secret",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(secret, JobSecret.newSecretText());
        try {
            return new HostJob(NetworkHosts.create(count), secret);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(secret);
            throw e;
        }
    }

    /** The hosts. */
    public NetworkHosts hosts() {
        return hosts;
    }

    /** The environment every launcher gets: the secret file, and a one-minute set-up deadline. */
    public Map<String, String> env() {
        return Map.of(JobSecret.FILE_ENV, secretFile.toString(), "TENSORBUS_SETUP_TIMEOUT", "60");
    }

    /**
     * Starts on every host a launcher of {@code nproc} ranks with {@code options} (after the node options) and
     * then TARGET and its arguments in {@code target}.
     */
    public List<ChildJvm> launchEverywhere(int nproc, List<String> options, List<String> target)
            throws IOException {
        for (int k = 0; k < hosts.count(); k++) {
            launch(k, nproc, options, target);
        }
        return launches;
    }

    /** Starts node {@code k}'s launcher on host {@code k}. */
    public ChildJvm launch(int k, int nproc, List<String> options, List<String> target) throws IOException {
        List<String> args = new ArrayList<>(List.of("--nnodes", String.valueOf(hosts.count()), "--node-rank",
                String.valueOf(k), "--nproc-per-node", String.valueOf(nproc), "--master-addr", hosts.address(0),
                "--master-port", String.valueOf(PORT)));
        args.addAll(options);
        args.addAll(target);
        return launch(k, args);
    }

    /**
     * Starts {@code tensorbus launch ARGS} on host {@code k}: this JVM's java and class path, the launcher's main;
     * its output (the launcher's lines and the ranks', merged) collected line by line.
     */
    public ChildJvm launch(int k, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "io.tensorbus.workloads.cli.Main", "launch"));
        cmd.addAll(args);
        ChildJvm l = ChildJvm.of("host " + k, hosts.start(k, cmd, env()));
        launches.add(l);
        return l;
    }

    /** The launchers started, in order. */
    public List<ChildJvm> launches() {
        return launches;
    }

    /** Every launcher's exit status once all ended (null for one still running at the deadline). */
    public List<Integer> awaitAll(Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        List<Integer> codes = new ArrayList<>();
        for (ChildJvm l : launches) {
            codes.add(l.awaitExit(Duration.ofNanos(Math.max(0, end - System.nanoTime()))));
        }
        return codes;
    }

    /** Every launcher's output, for assertion messages. */
    public String report() {
        StringBuilder b = new StringBuilder();
        launches.forEach(l -> b.append("--- ").append(l.report()).append('\n'));
        return b.toString();
    }

    /** True when no process runs on any host. */
    public boolean nothingRuns() throws IOException {
        for (int k = 0; k < hosts.count(); k++) {
            if (!hosts.pids(k).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        try {
            hosts.close();
        } finally {
            Files.deleteIfExists(secretFile);
        }
    }
}
