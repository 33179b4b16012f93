package io.tensorbus.it.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.it.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A JVM rank and a PyTorch rank on two hosts (network namespaces, {@link NetworkHosts}): the example trainer of
 * examples/pytorch (Debian's python3-torch) hosts the job on host 0 and a JVM evaluator ({@code tensorbus run
 * pytorch-evaluator}) joins from host 1, both over their hosts' own addresses. Skipped, saying why, without
 * namespaces or without torch.
 */
@ExtendWith(NetworkHostsAvailable.class)
class MultiHostPyTorchTest {
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final int PORT = 29555;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aJvmEvaluatorOnOneHostScoresAPythonTrainerOnAnother() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(PYTHON), "skipped: no " + PYTHON);
        Process probe = new ProcessBuilder(PYTHON.toString(), "-c", "import torch.distributed")
                .redirectErrorStream(true).start();
        Assumptions.assumeTrue(probe.waitFor(60, TimeUnit.SECONDS) && probe.exitValue() == 0,
                "skipped: Python has no torch.distributed (apt-get install python3-torch)");
        String data = ROOT.resolve("api/core/src/main/resources/io/tensorbus/data/fashion-mnist").toString();
        try (NetworkHosts hosts = NetworkHosts.create(2)) {
            String init = "tcp://" + hosts.address(0) + ":" + PORT;
            ChildJvm trainer = ChildJvm.of("trainer", hosts.start(0, List.of(PYTHON.toString(),
                    ROOT.resolve("examples/pytorch/trainer.py").toString(), "--init-method", init, "--world-size", "2",
                    "--epochs", "1", "--data", data), Map.of("GLOO_SOCKET_IFNAME", "eth0")));
            List<String> jvm = new ArrayList<>(List.of(ProcessHandle.current().info().command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()),
                    "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
                    "-cp", System.getProperty("java.class.path"), "io.tensorbus.workloads.cli.Main", "run",
                    "pytorch-evaluator", "--init-method", init, "--rank", "1", "--world-size", "2"));
            try (trainer; ChildJvm evaluator = ChildJvm.of("evaluator", hosts.start(1, jvm, Map.of()))) {
                assertEquals(0, evaluator.awaitExit(Duration.ofSeconds(180)), evaluator.report() + trainer.report());
                assertEquals(0, trainer.awaitExit(Duration.ofSeconds(60)), trainer.report() + evaluator.report());
                Matcher m = Pattern.compile("epoch 1: the JVM ranks scored (\\d+) of 1000 .* scored here: (\\d+) of")
                        .matcher(trainer.output());
                assertTrue(m.find(), trainer.report());
                assertTrue(Math.abs(Integer.parseInt(m.group(1)) - Integer.parseInt(m.group(2))) <= 1,
                        trainer.report());
                assertTrue(evaluator.output().contains("round 1: rank 1 scored"), evaluator.report());
            }
        }
    }
}
