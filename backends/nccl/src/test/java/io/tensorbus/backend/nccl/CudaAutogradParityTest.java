package io.tensorbus.backend.nccl;

import io.tensorbus.Device;
import io.tensorbus.spi.contract.DeviceAutogradParityTest;

/** The device autograd parity suite on {@code cuda:0}; skipped, saying why, without CUDA (the GPU bundle runs it). */
class CudaAutogradParityTest extends DeviceAutogradParityTest {
    @Override
    protected Device device() {
        return new Device(CudaRuntimeProvider.TYPE, 0);
    }

    @Override
    protected void assumeAvailable() {
        CudaAvailable.assume("the CUDA autograd parity tests");
    }
}
