package io.tensorbus.workloads.bench;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.cli.Cli;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code gloo-mixed} suite: all-reduce of 4 B and 64 MiB in a 2-rank gloo job made of one PyTorch rank and one
 * JVM rank (the gloo backend in PyTorch interop mode), against a pure PyTorch 2-rank gloo job, both timed by the
 * PyTorch rank 0 with {@code tools/anchors/torch_gloo_allreduce.py}, alternated for {@code --rounds} rounds.
 * Reported as {@code gloo-mixed allreduce bytes=B round=R pure_us=P mixed_us=M ratio=M/P}.
 */
public final class GlooMixedBench {
    /** The anchor script, from the repository's root. */
    static final Path SCRIPT = Path.of("tools", "anchors", "torch_gloo_allreduce.py");
    private static final long[] SIZES = {4, 64L << 20};

    private GlooMixedBench() {
    }

    /** The timed all-reduces of a size, as the script times them: 200 up to 4 KiB, 10 above; untimed first. */
    static int[] rounds(long nbytes, int warmup) {
        return nbytes <= 4096 ? new int[] {warmup, 200} : new int[] {3, 10};
    }

    /**
     * The JVM rank of a mixed job: the script's all-reduces and barriers in its order (rank 1 beside the script's
     * rank 0, which times them), on the wire of the script's PyTorch.
     */
    static void jvmRank(int port, int warmup, PyTorchWire wire) throws Exception {
        InitOptions options = InitOptions.builder().backend("gloo").pytorchInterop(wire)
                .initMethod("tcp://127.0.0.1:" + port).rank(1).worldSize(2).timeout(Duration.ofMinutes(5))
                .environment(Map.of()).secret(JobSecret.none()).build();
        try (ProcessGroup pg = Distributed.initProcessGroup(options).await(300, TimeUnit.SECONDS)) {
            for (long nbytes : SIZES) {
                Tensor t = Tensor.ones((int) (nbytes / 4));
                int[] r = rounds(nbytes, warmup);
                for (int i = 0; i < r[0]; i++) {
                    pg.allReduce(t).await();
                }
                for (int i = 0; i < r[1]; i++) {
                    pg.barrier().await();
                    pg.allReduce(t).await();
                }
            }
        }
    }

    /** The medians the script's rank 0 printed, by size, in seconds. */
    static Map<Long, Double> medians(String printed) {
        Map<Long, Double> out = new HashMap<>();
        for (String line : printed.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 3 && f[0].equals("all_reduce")) {
                out.put(Long.parseLong(f[1]), Double.parseDouble(f[2]));
            }
        }
        return out;
    }

    private static Map<Long, Double> runScript(String python, List<String> args, Runnable beside, Path log)
            throws Exception {
        // An absolute path: the Python may run from another directory (a chroot, say).
        List<String> cmd = new ArrayList<>(List.of(python, SCRIPT.toAbsolutePath().toString()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("GLOO_SOCKET_IFNAME", "lo");
        Process p = pb.start();
        try {
            if (beside != null) {
                beside.run();
            }
            if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("the anchor failed: " + Files.readString(log));
            }
            Map<Long, Double> m = medians(Files.readString(log, StandardCharsets.UTF_8));
            if (m.size() != SIZES.length) {
                throw new IllegalStateException("the anchor printed no medians: " + Files.readString(log));
            }
            return m;
        } finally {
            p.destroyForcibly();
        }
    }

    /** {@code torch.__version__} of {@code python}. */
    private static String torchVersion(String python) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(python, "-c", "import torch; print(torch.__version__)").redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(python + " has no torch: " + out);
        }
        return out.lines().reduce((a, b) -> b).orElse("");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** {@code tensorbus bench gloo-mixed}: its options, and the run. */
    @Command(name = "gloo-mixed", description = "all-reduce of 4 B and 64 MiB: a PyTorch rank and a JVM rank"
            + " against two PyTorch ranks, over gloo (needs Debian's python3-torch, or --python of a 2.2+)")
    public static final class Suite extends BenchSuite {
        @Option(names = "--python", paramLabel = "PATH", description = "the Python with torch (default:"
                + " /usr/bin/python3)")
        String python = "/usr/bin/python3";
        @Option(names = "--rounds", paramLabel = "N", description = "pure and mixed runs, alternated (default: 3)")
        int rounds = 3;
        @Option(names = "--warmup", paramLabel = "ROUNDS", description = "untimed 4-byte all-reduces first"
                + " (default: 5000)")
        int warmup = 5000;

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            int n = Cli.range("--rounds", rounds, 1, 100);
            int w = Cli.range("--warmup", warmup, 0, 1_000_000);
            if (!Files.isRegularFile(SCRIPT)) {
                throw new IllegalArgumentException("run from the repository's root: " + SCRIPT + " is not here");
            }
            return () -> {
                try {
                    PyTorchWire wire = PyTorchWire.forVersion(torchVersion(python));
                    Path log = Files.createTempFile("gloo-mixed", ".log");
                    for (int round = 1; round <= n; round++) {
                        Map<Long, Double> pure = runScript(python, List.of("--warmup", Integer.toString(w),
                                "--init-method", "tcp://127.0.0.1:" + freePort()), null, log);
                        int port = freePort();
                        Map<Long, Double> mixed = runScript(python, List.of("--warmup", Integer.toString(w),
                                "--init-method", "tcp://127.0.0.1:" + port, "--rank", "0"), () -> {
                                    try {
                                        jvmRank(port, w, wire);
                                    } catch (Exception e) {
                                        throw new IllegalStateException("the JVM rank failed: " + e, e);
                                    }
                                }, log);
                        for (long size : SIZES) {
                            sink.accept(new Measurement("gloo-mixed", "allreduce").with("bytes", size)
                                    .with("round", round).with("pure_us", pure.get(size) * 1e6, 1)
                                    .with("mixed_us", mixed.get(size) * 1e6, 1)
                                    .with("ratio", mixed.get(size) / pure.get(size), 2));
                        }
                    }
                    Files.deleteIfExists(log);
                    return 0;
                } catch (Exception e) {
                    err.println("gloo-mixed: " + e.getMessage());
                    return 1;
                }
            };
        }
    }
}
