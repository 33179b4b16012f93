package io.tensorbus.backend.nccl;

import io.tensorbus.Device;
import io.tensorbus.spi.contract.DeviceRuntimeContractTest;

/** The CUDA runtime keeps the device runtime contract on {@code cuda:0}; skipped, saying why, without CUDA. */
class CudaRuntimeTest extends DeviceRuntimeContractTest {

    @Override
    protected Device device() {
        return new Device(CudaRuntimeProvider.TYPE, 0);
    }

    @Override
    protected void assumeAvailable() {
        CudaAvailable.assume("the CUDA runtime tests");
    }
}
