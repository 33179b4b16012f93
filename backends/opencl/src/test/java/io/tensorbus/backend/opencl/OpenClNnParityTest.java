package io.tensorbus.backend.opencl;

import io.tensorbus.Device;
import io.tensorbus.spi.contract.DeviceNnParityTest;

/** Layers, losses, optimizers and models on {@code opencl:0} against the host; skipped without OpenCL. */
class OpenClNnParityTest extends DeviceNnParityTest {
    @Override
    protected Device device() {
        return Device.opencl(0);
    }

    @Override
    protected void assumeAvailable() {
        OpenClAvailable.assume("the OpenCL nn parity tests");
    }
}
