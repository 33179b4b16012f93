package io.tensorbus.it.hosts;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code tensorbus launch} run on one of the {@link NetworkHosts}: this JVM's java and class path, the launcher's
 * main, the given options; its output (the launcher's lines and the ranks', merged) collected line by line.
 */
public final class HostLaunch {
    private final int host;
    private final Process process;
    private final StringBuilder output = new StringBuilder();
    /** When each line arrived ({@link System#nanoTime()}), by its index in the output. */
    private final List<Long> lineTimes = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;
    private final long startNanos = System.nanoTime();
    private volatile long endNanos;

    private HostLaunch(int host, Process process) {
        this.host = host;
        this.process = process;
        this.reader = Thread.ofVirtual().name("host-" + host + "-output").start(this::copy);
        process.onExit().thenRun(() -> endNanos = System.nanoTime());
    }

    /**
     * Starts {@code tensorbus launch ARGS} on host {@code k} of {@code hosts} with {@code env} added to the
     * environment (the job's secret file, say).
     */
    public static HostLaunch start(NetworkHosts hosts, int k, Map<String, String> env, List<String> args)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "io.tensorbus.workloads.cli.Main", "launch"));
        cmd.addAll(args);
        return new HostLaunch(k, hosts.start(k, cmd, env));
    }

    /** The launcher's options for node {@code node} of {@code nnodes} whose master is host 0. */
    public static List<String> nodeOptions(NetworkHosts hosts, int nnodes, int node, int nproc, int port) {
        return List.of("--nnodes", String.valueOf(nnodes), "--node-rank", String.valueOf(node), "--nproc-per-node",
                String.valueOf(nproc), "--master-addr", hosts.address(0), "--master-port", String.valueOf(port));
    }

    private void copy() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                synchronized (output) {
                    output.append(line).append('\n');
                    lines.add(line);
                    lineTimes.add(System.nanoTime());
                    output.notifyAll();
                }
            }
        } catch (IOException e) {
            // Killed: what was read is kept.
        }
    }

    /** Everything printed so far. */
    public String output() {
        synchronized (output) {
            return output.toString();
        }
    }

    /** Waits for the exit and the last output; the exit status, or null at the deadline. */
    public Integer awaitExit(Duration limit) throws InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            return null;
        }
        reader.join(2000);
        return process.exitValue();
    }

    /** Waits until the output contains {@code text}; false at the deadline or when it ended without. */
    public boolean awaitOutput(String text, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        synchronized (output) {
            while (output.indexOf(text) < 0) {
                long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                if (left <= 0 || (!process.isAlive() && !reader.isAlive())) {
                    return output.indexOf(text) >= 0;
                }
                output.wait(Math.min(left, 100));
            }
            return true;
        }
    }

    /** When the first line containing {@code text} arrived ({@link System#nanoTime()}), or -1 when none has. */
    public long firstTime(String text) {
        synchronized (output) {
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(text)) {
                    return lineTimes.get(i);
                }
            }
            return -1;
        }
    }

    /** When it ended, {@link System#nanoTime()}; 0 while it runs. */
    public long endNanos() {
        return endNanos;
    }

    /** When it started, {@link System#nanoTime()}. */
    public long startNanos() {
        return startNanos;
    }

    /** The launcher process. */
    public Process process() {
        return process;
    }

    @Override
    public String toString() {
        return "host " + host + " (exit " + (process.isAlive() ? "-" : process.exitValue()) + "):\n" + output();
    }
}
