package io.tensorbus.backend.opencl;

import io.tensorbus.Device;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;

/** The opencl backend keeps the backend contract, every buffer in OpenCL device memory. */
class OpenClBackendContractTest extends BackendContractTest {

    @BeforeAll
    static void needsOpenCl() {
        OpenClAvailable.assume("the opencl backend contract suite");
    }

    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("opencl");
    }

    @Override
    protected UnaryOperator<Backend> placement() {
        return onDevice(Device.opencl(0));
    }
}
