package io.tensorbus.workloads.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.Device;
import io.tensorbus.spi.DeviceRuntimeProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class CollectivesBenchTest {
    @Test
    void defaultsAreTheAnchorsRunOnTwoProcesses() {
        CollectivesBench.Options o = CollectivesBench.Options.parse(List.of());
        assertEquals(2, o.world());
        assertEquals(List.of("allreduce", "broadcast", "allgather"), o.ops());
        assertEquals(Long.MAX_VALUE, o.maxBytes());
        assertEquals(CollectivesBench.DEFAULT_JIT_WARMUP, o.jitWarmup());
    }

    @Test
    void parsesEveryOptionAndRoundTripsThroughTheWorkerArguments() {
        CollectivesBench.Options o = CollectivesBench.Options.parse(List.of("--world", "4", "--ops",
                "allgather,allreduce", "--max-bytes", "4096", "--jit-warmup", "0"));
        assertEquals(new CollectivesBench.Options(4, List.of("allgather", "allreduce"), 4096, 0), o);
        assertEquals(o, CollectivesBench.Options.parse(o.toArgs()));
        CollectivesBench.Options threads = CollectivesBench.Options.parse(List.of("--ranks-as-threads"));
        assertTrue(threads.ranksAsThreads());
        assertEquals(threads, CollectivesBench.Options.parse(threads.toArgs()));
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void ranksAsThreadsOfOneJvmReportLinesThatSaySo() {
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new CollectivesBench(CollectivesBench.Options.parse(List.of("--max-bytes", "4096", "--jit-warmup",
                "5", "--ops", "allreduce", "--ranks-as-threads"))).run(got::add,
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String e = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, e);
        assertTrue(e.contains("starting 1 process(es) with 2 rank thread(s)"), e);
        List<String> lines = got.stream().map(Measurement::line).toList();
        assertEquals(2, lines.size(), lines.toString());
        for (String line : lines) {
            assertTrue(line.matches("collectives allreduce bytes=\\d+ world=2 latency_us=\\d+\\.\\d"
                    + " busbw_GBps=\\d+\\.\\d{4} ranks=threads"), line);
        }
    }

    @Test
    void aDeviceTypeAlonePutsEachRankOnItsOwnDevice() {
        ToIntFunction<String> eight = type -> 8;
        assertEquals(Device.cuda(3), CollectivesWorker.placed(Device.parse("cuda"), "3", 1,
                eight));
        assertEquals(Device.cuda(1), CollectivesWorker.placed(Device.parse("cuda"), null, 1,
                eight));
        assertEquals(Device.opencl(0), CollectivesWorker.placed(Device.opencl(0), "1", 1,
                eight));
        assertEquals(Device.CPU, CollectivesWorker.placed(Device.CPU, "1", 1, eight));
        // One device (pocl): every rank shares it.
        assertEquals(Device.opencl(0), CollectivesWorker.placed(Device.parse("opencl"), "1",
                1, type -> 1));
    }

    @Test
    void badOptionsSayWhatIsAllowed() {
        assertMessage("--world must be from 2 to 64, got 1", "--world", "1");
        assertMessage("Invalid value for option '--world': 'two' is not an int", "--world", "two");
        assertMessage("Missing required parameter for option '--world' (N)", "--world");
        assertMessage("unknown operation 'reduce' in --ops", "--ops", "allreduce,reduce");
        assertMessage("--ops needs at least one", "--ops", ",");
        assertMessage("--max-bytes must be at least 4", "--max-bytes", "2");
        assertMessage("--jit-warmup must be from 0", "--jit-warmup", "-1");
        assertMessage("Unknown options: '--iters', '5'", "--iters", "5");
        assertMessage("option '--world' (N) should be specified only once", "--world", "2", "--world", "3");
    }

    @Test
    void iterationsAndBusBandwidthFollowTheAnchor() {
        assertEquals(50, CollectivesBench.iterations(4));
        assertEquals(50, CollectivesBench.iterations(262144));
        assertEquals(10, CollectivesBench.iterations(4 << 20));
        assertEquals(4, CollectivesBench.iterations(64 << 20));
        assertEquals(1.0, CollectivesBench.busBandwidthFactor("allreduce", 2), 0);
        assertEquals(1.5, CollectivesBench.busBandwidthFactor("allreduce", 4), 0);
        assertEquals(0.5, CollectivesBench.busBandwidthFactor("allgather", 2), 0);
        assertEquals(1.0, CollectivesBench.busBandwidthFactor("broadcast", 8), 0);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void smallSizesOnTwoJvmsReportOneLinePerOperationAndSize() {
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new CollectivesBench(CollectivesBench.Options.parse(List.of("--max-bytes", "4096", "--jit-warmup",
                "5"))).run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        List<String> lines = got.stream().map(Measurement::line).toList();
        assertEquals(6, lines.size(), lines.toString());
        int i = 0;
        for (String op : CollectivesBench.OPS) {
            for (int bytes : new int[] {4, 4096}) {
                String line = lines.get(i++);
                assertTrue(line.matches("collectives " + op + " bytes=" + bytes
                        + " world=2 latency_us=\\d+\\.\\d busbw_GBps=\\d+\\.\\d{4}"), line);
            }
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void theOpenClBackendAloneBringsItsTensorsToTheOneDeviceBothRanksShare() {
        Assumptions.assumeTrue(DeviceRuntimeProvider.all().stream()
                .anyMatch(p -> p.type().equals("opencl") && p.isAvailable()), "no OpenCL platform here");
        CollectivesBench.Options o = CollectivesBench.Options.parse(List.of("--backend", "opencl", "--ops",
                "allreduce", "--max-bytes", "4", "--jit-warmup", "1"));
        assertEquals(Device.parse("opencl"), o.device(), "each rank's OpenCL device");
        List<Measurement> got = new ArrayList<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new CollectivesBench(o).run(got::add, new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        assertEquals(1, got.size(), got.toString());
        assertTrue(got.getFirst().line().matches("collectives allreduce bytes=4 world=2 latency_us=\\d+\\.\\d"
                + " busbw_GBps=\\d+\\.\\d{4} backend=opencl device=opencl"), got.getFirst().line());
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CollectivesBench.Options.parse(List.of(args)));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
