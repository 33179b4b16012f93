package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;
import java.util.Map;

/**
 * The tcp backend keeps the backend contract with shared memory off ({@code tcp.sharedMemory=false}): every
 * frame over the sockets, as between hosts. {@link TcpBackendContractTest} runs it with the default, shared
 * memory between these ranks of one host.
 */
class TcpBackendOverSocketsContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("tcp");
    }

    @Override
    protected Map<String, String> properties() {
        return Map.of("tcp.sharedMemory", "false");
    }
}
