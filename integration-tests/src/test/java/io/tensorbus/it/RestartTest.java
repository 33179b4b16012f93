package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * torchrun's restarts on the DDP workload: {@code tensorbus launch --max-restarts 1 ddp-fashion-mnist
 * --checkpoint-dir DIR}, rank 1 killed with SIGKILL in the middle of the second epoch, finishes from the first
 * epoch's checkpoint with the accuracy of an uninterrupted run.
 */
class RestartTest {
    private static final List<String> TRAINING = List.of("ddp-fashion-mnist", "--epochs", "2", "--limit", "2560");

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aKilledRankIsRestartedAndTrainingResumesFromTheLastCheckpoint() throws Exception {
        LaunchResult plain = run(List.of("--nproc-per-node", "2", "--timeout", "100"), dir.resolve("plain"), false)
                .succeeded();
        LaunchResult killed = run(List.of("--nproc-per-node", "2", "--timeout", "150", "--max-restarts", "1"),
                dir.resolve("killed"), true).succeeded();
        assertTrue(killed.err().contains("rank 1 (local rank 1, pid ") && killed.err().contains("exited with code 137")
                && killed.err().contains("restarting every rank (restart 1 of 1)"), killed.toString());
        assertTrue(killed.out().contains("[rank 0] resumed from the checkpoint in ")
                && killed.out().contains("after epoch 1 (restart 1)"), killed.toString());
        double uninterrupted = accuracy(plain);
        assertEquals(uninterrupted, accuracy(killed), 1.0, "within a point of the uninterrupted run:\n" + killed);
    }

    /** Launches the training; with {@code kill}, SIGKILLs rank 1 a moment after rank 0 reports the first epoch. */
    private static LaunchResult run(List<String> launchOptions, Path checkpoints, boolean kill) throws IOException {
        List<String> args = new ArrayList<>(launchOptions);
        args.addAll(TRAINING);
        args.addAll(List.of("--checkpoint-dir", checkpoints.toString()));
        StringBuffer out = new StringBuffer();
        StringBuffer err = new StringBuffer();
        Runnable killer = kill ? RestartTest::killRankOneOfTheFirstAttempt : () -> { };
        int code = Launcher.run(args, watching(out, "[rank 0] epoch 1/2", killer), watching(err, null, null));
        return new LaunchResult(code, out.toString(), err.toString());
    }

    /**
     * A stream that keeps what is written and runs {@code action} on a thread of its own once {@code trigger} shows.
     */
    private static PrintStream watching(StringBuffer text, String trigger, Runnable action) {
        OutputStream sink = new OutputStream() {
            private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            private boolean fired;

            @Override
            public synchronized void write(int b) {
                bytes.write(b);
                if (b == '\n') {
                    String line = bytes.toString(StandardCharsets.UTF_8);
                    bytes.reset();
                    text.append(line);
                    if (!fired && trigger != null && line.startsWith(trigger)) {
                        fired = true;
                        Thread.ofVirtual().start(action);
                    }
                }
            }
        };
        return new PrintStream(sink, true, StandardCharsets.UTF_8);
    }

    /** The launched JVM of rank 1 in the first attempt, found by its environment, gets SIGKILL mid-epoch. */
    private static void killRankOneOfTheFirstAttempt() {
        try {
            Thread.sleep(400);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ProcessHandle.current().descendants().filter(p -> environment(p).contains("\0RANK=1\0")
                && environment(p).contains("\0TORCHELASTIC_RESTART_COUNT=0\0")).forEach(ProcessHandle::destroyForcibly);
    }

    private static String environment(ProcessHandle p) {
        try {
            return "\0" + Files.readString(Path.of("/proc", Long.toString(p.pid()), "environ"),
                    StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private static double accuracy(LaunchResult r) {
        Matcher m = Pattern.compile("(?m)^\\[rank 0] test accuracy (\\d+\\.\\d{2})%$").matcher(r.out());
        assertTrue(m.find(), r.toString());
        return Double.parseDouble(m.group(1));
    }
}
