package io.tensorbus.backend.opencl;

import io.tensorbus.Device;
import io.tensorbus.spi.contract.DeviceAutogradParityTest;

/** Tensor operations with autograd on {@code opencl:0} against the host; skipped, saying why, without OpenCL. */
class OpenClAutogradParityTest extends DeviceAutogradParityTest {
    @Override
    protected Device device() {
        return Device.opencl(0);
    }

    @Override
    protected void assumeAvailable() {
        OpenClAvailable.assume("the OpenCL autograd parity tests");
    }
}
