package io.tensorbus.spi.contract;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python with PyTorch that the interop tests run against: Debian's {@code /usr/bin/python3} (PyTorch 1.13), or
 * the program {@value #ENV} names (a PyTorch 2.x, say, such as {@code tools/pytorch2/python-torch2}), and its
 * {@code torch.__version__}.
 */
public final class TorchPython {
    /** The environment variable naming another Python to test against. */
    public static final String ENV = "TENSORBUS_TEST_PYTHON";
    /** The Python the tests start. */
    public static final Path PYTHON = Path.of(System.getenv().getOrDefault(ENV, "/usr/bin/python3"));
    private static String version;

    private TorchPython() {
    }

    /** Skips the calling test, saying why, unless {@link #PYTHON} has torch.distributed; answers its version. */
    public static synchronized String assumeTorch() throws IOException, InterruptedException {
        Assumptions.assumeTrue(Files.isExecutable(PYTHON), "skipped: no " + PYTHON);
        if (version == null) {
            Process probe = new ProcessBuilder(PYTHON.toString(), "-c",
                    "import torch, torch.distributed; print(torch.__version__)").redirectErrorStream(true).start();
            String out = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            boolean ok = probe.waitFor(60, TimeUnit.SECONDS) && probe.exitValue() == 0;
            version = ok ? out.lines().reduce((a, b) -> b).orElse("") : "";
        }
        Assumptions.assumeFalse(version.isEmpty(),
                "skipped: " + PYTHON + " has no torch.distributed (apt-get install python3-torch)");
        return version;
    }
}
