package io.tensorbus.it;

import io.tensorbus.workloads.cli.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code opencl} backend across real JVMs started by the launcher (each with its own pocl cache): a user's
 * {@code cl_mem} all-reduced in place, and device tensors all-reduced, broadcast and all-gathered
 * ({@link OpenClCheck}).
 */
class MultiJvmOpenClTest {

    @ParameterizedTest(name = "{0} JVMs")
    @ValueSource(ints = {2, 3})
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void aUsersClMemAndDeviceTensorsAreReducedAcrossJvms(int world) {
        OpenClCheck.assumeOpenCl("the multi-JVM OpenCL test");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc-per-node", String.valueOf(world), "--timeout", "120",
                        OpenClCheck.class.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        String report = "exit " + code + "\n--- stdout\n" + o + "--- stderr\n" + err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, report);
        for (int r = 0; r < world; r++) {
            assertTrue(o.contains("[rank " + r + "] OPENCL OK 8 checks (rank " + r + " of " + world + ")"), report);
        }
    }
}
