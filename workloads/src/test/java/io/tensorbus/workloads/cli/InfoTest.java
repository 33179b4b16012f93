package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.tensor.CpuInfo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code tensorbus info} lists the backends and every device runtime's devices, or why it has none. */
class InfoTest {

    @Test
    void infoListsBackendsAndOpenClDevicesOrWhyThereAreNone() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Info.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("backend tcp: available"), out);
        assertTrue(out.contains("backend opencl: "), out);
        boolean openCl = DeviceRuntimeProvider.all().stream().anyMatch(p -> p.type().equals("opencl")
                && p.isAvailable());
        assertTrue(openCl ? out.contains("device opencl:0  ") : out.contains("devices opencl: none ("), out);
        assertTrue(out.contains("cuda"), out);
        assertTrue(out.contains("cpu: " + CpuInfo.current().model() + " ("), out);
    }
}
