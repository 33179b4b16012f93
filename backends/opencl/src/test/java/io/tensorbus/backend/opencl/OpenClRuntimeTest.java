package io.tensorbus.backend.opencl;

import io.tensorbus.Device;
import io.tensorbus.spi.contract.DeviceRuntimeContractTest;

/** The OpenCL runtime keeps the device runtime contract on the first OpenCL device (pocl in CI). */
class OpenClRuntimeTest extends DeviceRuntimeContractTest {

    @Override
    protected Device device() {
        return Device.opencl(0);
    }

    @Override
    protected void assumeAvailable() {
        OpenClAvailable.assume("the OpenCL runtime tests");
    }
}
