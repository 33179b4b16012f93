package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;
import java.util.Map;

/**
 * The tcp backend keeps the backend contract with shared-memory rings between every pair but no shared area
 * ({@code tcp.sharedMemoryAllReduce=false}): the ring, chain, tree and dissemination algorithms over shared
 * memory, as in a group whose ranks are not all on one host. {@link TcpBackendContractTest} runs the default
 * (collectives in the area), {@link TcpBackendOverSocketsContractTest} sockets only.
 */
class TcpBackendOverRingsContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("tcp");
    }

    @Override
    protected Map<String, String> properties() {
        return Map.of("tcp.sharedMemoryAllReduce", "false");
    }
}
