package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;

/** The tcp backend keeps the backend contract. */
class TcpBackendContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("tcp");
    }
}
