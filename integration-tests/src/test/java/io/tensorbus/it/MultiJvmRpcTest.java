package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RPC between workers in separate JVMs, started by {@code tensorbus launch} ({@link RpcCheck}). */
class MultiJvmRpcTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int launch(int world, String mode, int timeoutSeconds, String... more) {
        return launch(List.of(), world, mode, timeoutSeconds, more);
    }

    private int launch(List<String> launch, int world, String mode, int timeoutSeconds, String... more) {
        List<String> args = new ArrayList<>(launch);
        args.addAll(List.of("--nproc-per-node", String.valueOf(world), "--timeout",
                String.valueOf(timeoutSeconds), RpcCheck.class.getName(), mode));
        args.addAll(List.of(more));
        return Launcher.run(args,
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String report(int code) {
        return "exit " + code + "\n--- stdout\n" + out.toString(StandardCharsets.UTF_8) + "--- stderr\n"
                + err.toString(StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} JVMs")
    @ValueSource(ints = {2, 3})
    @Timeout(120)
    void everyCallFormWorksAcrossJvmsAndAllShutDownGracefully(int world) {
        int code = launch(world, "calls", 100);
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report(code));
        for (int r = 0; r < world; r++) {
            assertTrue(o.contains("[rank " + r + "] RPC OK worker" + r), report(code));
        }
    }

    @Test
    @Timeout(120)
    void everyCallFormWorksBetweenRankThreadsOfOneJvm() {
        // As the launcher runs them with --ranks-as-threads: each worker its own agent, Vert.x and connections.
        int code = launch(List.of("--ranks-as-threads"), 3, "calls", 100);
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report(code));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("starting 1 process(es) with 3 rank thread(s)"),
                report(code));
        for (int r = 0; r < 3; r++) {
            assertTrue(o.contains("[rank " + r + "] RPC OK worker" + r), report(code));
        }
    }

    @Test
    @Timeout(120)
    void everyCallFormWorksAcrossJvmsOverTcpWithSharedMemoryOff() {
        int code = launch(2, "calls", 100, "sharedMemory=false");
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report(code));
        assertTrue(o.contains("[rank 0] RPC OK worker0") && o.contains("[rank 1] RPC OK worker1"), report(code));
    }

    @Test
    @Timeout(120)
    void aWorkerWhoseJvmDiesFailsItsPendingCallNamingItAndTheOthersGoOn() throws Exception {
        // Not through the launcher: it stops every rank when one dies, and the survivors must go on here.
        try (ChildJob job = ChildJob.start(3, RpcCheck.class.getName(), "lost")) {
            Integer code = job.get(0).awaitExit(Duration.ofSeconds(60));
            String o = job.get(0).output();
            assertEquals(0, code, o + job.get(2).output());
            assertTrue(job.get(2).output().contains("HALTING"), job.get(2).output());
            assertTrue(o.contains("LOST worker worker2 (rank 2) was lost while 'it.halt' ran"), o);
            assertTrue(o.contains("STILL OK"), o);
            for (int r = 0; r < 3; r++) {
                long pid = job.get(r).pid();
                try (Stream<Path> files = Files.list(
                        Path.of("/dev/shm"))) {
                    assertEquals(List.of(), files.filter(f -> f.getFileName().toString()
                            .startsWith("tensorbus-" + pid + "-")).toList(), "no channel file of worker" + r + " left");
                }
            }
        }
    }
}
