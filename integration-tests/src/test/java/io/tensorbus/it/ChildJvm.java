package io.tensorbus.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A JVM this test starts with its own java executable and class path, the flags tensorbus needs, and the
 * given environment; collects stdout and stderr (merged) line by line. Close it in a finally block: it kills
 * the process if it still runs.
 */
public final class ChildJvm implements AutoCloseable {
    private final String name;
    private final Process process;
    private final StringBuilder output = new StringBuilder();
    /** Each line, with when it arrived ({@link System#nanoTime()}). */
    private final List<String> lines = new ArrayList<>();
    private final List<Long> lineTimes = new ArrayList<>();
    private final Thread reader;
    private volatile long endNanos;

    private ChildJvm(String name, Process process) {
        this.name = name;
        this.process = process;
        this.reader = Thread.ofVirtual().name(name + "-output").start(() -> copy(process.getInputStream()));
        process.onExit().thenRun(() -> endNanos = System.nanoTime());
    }

    /** Follows a process started elsewhere (its stdout, with stderr merged into it). */
    public static ChildJvm of(String name, Process process) {
        return new ChildJvm(name, process);
    }

    static ChildJvm start(String name, Map<String, String> env, String mainClass, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(List.of("--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-Xmx512m",
                "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("TENSORBUS_STORE_HOSTED");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        return new ChildJvm(name, p);
    }

    private void copy(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                synchronized (output) {
                    output.append(line).append('\n');
                    lines.add(line);
                    lineTimes.add(System.nanoTime());
                    output.notifyAll();
                }
            }
        } catch (IOException e) {
            // The process was killed; what was read is kept.
        }
    }

    /** The process. */
    public Process process() {
        return process;
    }

    /** The process id of the JVM. */
    long pid() {
        return process.pid();
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

    /** When the process ended ({@link System#nanoTime()}); 0 while it runs. */
    public long endNanos() {
        return endNanos;
    }

    /** Everything it printed so far. */
    public String output() {
        synchronized (output) {
            return output.toString();
        }
    }

    /** Waits until its output contains {@code text}; false at the deadline or when the process ended without it. */
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

    /** Waits for the exit and the last output; returns the exit status, or null at the deadline. */
    public Integer awaitExit(Duration limit) throws InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            return null;
        }
        reader.join(2000);
        return process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }

    /** Its name, exit status and everything it printed, for an assertion's message. */
    public String report() {
        return name + " (exit " + (process.isAlive() ? "-" : process.exitValue()) + "):\n" + output();
    }
}
