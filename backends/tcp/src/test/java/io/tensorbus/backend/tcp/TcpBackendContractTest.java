package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;

/**
 * The tcp backend keeps the backend contract with its defaults: these ranks share a host, so their frames go
 * through shared memory ({@link TcpBackendOverSocketsContractTest} runs it over the sockets).
 */
class TcpBackendContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("tcp");
    }
}
