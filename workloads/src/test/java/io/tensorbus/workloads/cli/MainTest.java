package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.CpuInfo;
import io.tensorbus.workloads.bench.Measurement;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void unknownCommandSaysSoAndWhereTheUsageIsAndExitsWithTwo() {
        assertEquals(2, run("frobnicate"));
        assertEquals("tensorbus: unknown command 'frobnicate'\n(tensorbus help lists the commands and their options)\n",
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpOfEveryCommandAndWorkloadPrintsItsUsageAndExitsWithZero() {
        List<List<String>> asks = new ArrayList<>();
        for (String command : List.of("info", "bench", "run", "launch", "fr-trace", "secret", "help")) {
            asks.add(List.of(command, "--help"));
            asks.add(List.of(command, "-h"));
        }
        for (String workload : List.of("ddp-fashion-mnist", "parameter-server", "pipeline-resnet50", "local-demo")) {
            asks.add(List.of("run", workload, "--help"));
            asks.add(List.of("run", workload, "-h"));
        }
        for (String suite : List.of("tensor", "nn", "p2p", "collectives", "ddp", "rpc", "dist-autograd", "pipeline",
                "zero", "soak")) {
            asks.add(List.of("bench", suite, "--help"));
        }
        for (List<String> ask : asks) {
            out.reset();
            err.reset();
            assertEquals(0, run(ask.toArray(String[]::new)), ask + ": " + err);
            String o = out.toString(StandardCharsets.UTF_8);
            String name = ask.get(0);
            assertTrue(o.startsWith("usage: tensorbus") && o.contains(ask.size() > 2 ? ask.get(1) : name)
                    && o.contains("-h, --help"), ask + ": " + o);
            assertEquals("", err.toString(StandardCharsets.UTF_8), ask.toString());
        }
        out.reset();
        assertEquals(0, run("run", "pipeline-resnet50", "--help"));
        String pipeline = out.toString(StandardCharsets.UTF_8);
        assertTrue(pipeline.startsWith("usage: tensorbus run pipeline-resnet50 ") && pipeline.contains("--schedule=S")
                && pipeline.contains("micro-batch counts to time"), pipeline);
    }

    @Test
    void missingCommandExitsWithTwo() {
        assertEquals(2, run());
    }

    @Test
    void unknownBenchSuiteExitsWithTwo() {
        assertEquals(2, run("bench", "nope"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown bench suite 'nope'"));
    }

    @Test
    void jsonOptionWithoutFileExitsWithTwo() {
        assertEquals(2, run("bench", "tensor", "--json"));
    }

    @Test
    void unknownWorkloadExitsWithTwo() {
        assertEquals(2, run("run", "no-such-workload"));
    }

    @Test
    void badDdpWorkloadArgumentsExitWithTwoAndSayWhatIsAllowed() {
        assertEquals(2, run("run", "ddp-fashion-mnist", "--nproc", "0"));
        String e = err.toString(StandardCharsets.UTF_8);
        assertEquals("tensorbus: run ddp-fashion-mnist: --nproc must be from 1 to 1024, got 0\n"
                + "(tensorbus run ddp-fashion-mnist --help shows its options)\n", e);
    }

    @Test
    void badDdpBenchOptionsExitWithTwo() {
        assertEquals(2, run("bench", "ddp", "--world", "65"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("bench ddp: --world must be from 1 to 64, got 65"));
    }

    @Test
    void helpPrintsUsageAndSucceeds() {
        assertEquals(0, run("help"));
        String all = out.toString(StandardCharsets.UTF_8);
        for (String command : List.of("info", "bench", "run", "launch", "fr-trace", "secret")) {
            assertTrue(all.contains("\n  " + command + " "), command + " is listed:\n" + all);
        }
        out.reset();
        assertEquals(0, run("help", "run"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("ddp-fashion-mnist"), out.toString());
    }

    @Test
    void infoNamesJdkProcessorsAndVectorWidth() {
        assertEquals(0, run("info"));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("java: " + Runtime.version()), text);
        assertTrue(text.contains("available processors: " + Runtime.getRuntime().availableProcessors()), text);
        assertTrue(text.contains("vector species (preferred): "), text);
        assertTrue(text.contains("tensorbus: "), text);
    }

    @Test
    void everyBenchmarkRunStartsByNamingTheCpu() {
        CpuInfo xeon = new CpuInfo("GenuineIntel",
                "Intel(R) Xeon(R) Platinum 8488C", 6, 143, 2, 48 << 10, 2 << 20, 105 << 20, 512,
                Set.of("avx512f", "amx_tile"));
        assertEquals("machine cpu model=\"Intel(R) Xeon(R) Platinum 8488C\" vendor=GenuineIntel family=6"
                + " model_number=143 cores=2 l2_kib=2048 l3_kib=107520 capability=AVX512",
                Measurement.machine(xeon).line());
    }
}
