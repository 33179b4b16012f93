package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.metrics.TensorbusMetrics;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The memory of the device a group is bound to is published beside the host's: {@code tensorbus.memory.allocated}
 * tagged with the device follows the device tensors a rank holds (on pocl's CPU device where no GPU is).
 */
class DeviceMemoryMetricsTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aBoundDevicesAllocatedBytesFollowItsTensors() {
        OpenClCheck.assumeOpenCl("the device memory gauge test");
        Device device = Device.parse("opencl:0");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorbusMetrics metrics = new TensorbusMetrics()) {
            metrics.bindTo(registry);
            Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("on-device").deviceId(device), pg -> {
                if (pg.rank() != 0) {
                    return;
                }
                Gauge allocated = registry.find("tensorbus.memory.allocated").tags("device", "opencl:0").gauge();
                assertNotNull(allocated, "the bound device's gauge");
                double before = allocated.value();
                Tensor held = Tensor.zeros(device, DType.FLOAT32, 1 << 20);
                assertTrue(allocated.value() >= before + (4 << 20), "4 MiB more than " + before + ": "
                        + allocated.value());
                assertEquals("bytes", allocated.getId().getBaseUnit());
                assertEquals(1 << 20, held.numel());
            });
        }
    }
}
