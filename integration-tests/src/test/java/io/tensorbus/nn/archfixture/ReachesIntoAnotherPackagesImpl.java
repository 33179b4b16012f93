package io.tensorbus.nn.archfixture;

import io.tensorbus.distributed.rpc.impl.RpcFrame;

/**
 * Uses the RPC's {@code impl} from outside {@code distributed.rpc}: {@code IMPL_STAYS_IN_ITS_PARENT} must report it.
 */
public final class ReachesIntoAnotherPackagesImpl {
    private ReachesIntoAnotherPackagesImpl() {
    }

    /** Calls into another package's impl. */
    public static Object frame() {
        return RpcFrame.encode(RpcFrame.OPEN, 0, new byte[0]);
    }
}
