package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.BackendContractTest;

/**
 * The tcp backend keeps the backend contract with each rank on a Vert.x of its own, as
 * {@code tensorbus launch --ranks-as-threads} runs the ranks of a node in one JVM: no event loop, timer or
 * collective thread is shared between ranks. {@link TcpBackendContractTest} runs the ranks on one Vert.x, as
 * {@code Distributed.spawn} does.
 */
class TcpBackendRanksAsThreadsContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        return BackendProvider.named("tcp");
    }

    @Override
    protected boolean vertxPerRank() {
        return true;
    }
}
