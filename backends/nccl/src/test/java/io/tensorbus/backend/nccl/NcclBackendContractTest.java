package io.tensorbus.backend.nccl;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;

/**
 * The nccl backend keeps the backend contract, rank r's buffers on {@code cuda:r}. The suite runs up to three
 * ranks as threads of one JVM and NCCL needs a device per rank, so it needs three CUDA devices; elsewhere it is
 * skipped, saying why. {@code docs/gpu.md} says how to run it.
 */
class NcclBackendContractTest extends BackendContractTest {

    @BeforeAll
    static void needsNcclAndThreeDevices() {
        CudaAvailable.assumeNccl("the nccl backend contract suite", 3);
    }

    @Override
    protected BackendProvider provider() {
        return BackendProvider.named(NcclBackendProvider.NAME);
    }

    @Override
    protected UnaryOperator<Backend> placement() {
        return onDevicePerRank(CudaRuntimeProvider.TYPE);
    }

    @Override
    protected boolean fullPointToPoint() {
        return false;
    }
}
