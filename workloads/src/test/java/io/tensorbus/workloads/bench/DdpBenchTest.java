package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class DdpBenchTest {
    @Test
    void defaultsAreTheAnchorsRunAndOptionsRoundTripThroughTheWorkerArguments() {
        assertEquals(new DdpBench.Options(2, 1000, 60), DdpBench.Options.parse(List.of()));
        DdpBench.Options o = DdpBench.Options.parse(List.of("--world", "4", "--warmup", "5", "--steps", "30"));
        assertEquals(new DdpBench.Options(4, 5, 30), o);
        assertEquals(o, DdpBench.Options.parse(o.toArgs()));
    }

    @Test
    void badOptionsSayWhatIsAllowed() {
        assertMessage("--world must be from 1 to 64, got 0", "--world", "0");
        assertMessage("--steps must be from 11 to 1000000, got 10", "--steps", "10");
        assertMessage("Missing required parameter for option '--world' (N)", "--world");
        assertMessage("Unknown options: '--batch', '64'", "--batch", "64");
        assertMessage("option '--steps' (S) should be specified only once", "--steps", "20", "--steps", "30");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void worldOneTrainsLocallyWithoutDdpAndReportsNoCommunication() {
        List<Measurement> got = run("--world", "1", "--warmup", "50", "--steps", "12");
        assertEquals(1, got.size());
        String line = got.getFirst().line();
        assertTrue(line.matches("ddp step world=1 batch=128 step_ms=\\d+\\.\\d{2} samples_per_s=\\d+"
                + " cold_step_ms=\\d+\\.\\d{2}"), line);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void worldTwoRunsTwoJvmsAndReportsTheExposedCommunication() {
        List<Measurement> got = run("--world", "2", "--warmup", "3", "--steps", "12");
        assertEquals(1, got.size());
        String line = got.getFirst().line();
        assertTrue(line.matches("ddp step world=2 batch=128 step_ms=\\d+\\.\\d{2} samples_per_s=\\d+"
                + " exposed_comm_ms=\\d+\\.\\d{3}"), line);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void worldTwoAsThreadsOfOneJvmReportsTheSameMeasurement() {
        DdpBench.Options o = DdpBench.Options.parse(List.of("--world", "2", "--warmup", "3", "--steps", "12",
                "--ranks-as-threads"));
        assertTrue(o.ranksAsThreads());
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(0, new DdpBench(o).run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8)),
                err.toString(StandardCharsets.UTF_8));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("starting 1 process(es) with 2 rank thread(s)"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(1, got.size());
        assertTrue(got.getFirst().line().startsWith("ddp step world=2 batch=128 step_ms="), got.toString());
    }

    private static List<Measurement> run(String... args) {
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new DdpBench(DdpBench.Options.parse(List.of(args))).run(got::add,
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        return got;
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DdpBench.Options.parse(List.of(args)));
        assertTrue(e.getMessage().startsWith(expected), "message: " + e.getMessage());
    }
}
