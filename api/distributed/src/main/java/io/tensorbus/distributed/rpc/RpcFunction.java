package io.tensorbus.distributed.rpc;

import java.util.List;

/**
 * A function other workers may call by its registered name (see {@link RpcRegistry}). It runs on a
 * virtual thread of the callee, so it may block; its arguments and result go through the RPC codec
 * (tensors, numbers, strings, lists, maps, registered records).
 */
@FunctionalInterface
public interface RpcFunction {
    /**
     * Runs the call.
     *
     * @param args the caller's arguments, decoded
     * @return the result sent back (may be null)
     * @throws Exception any failure: the caller receives it as a {@link RemoteException}
     */
    Object apply(List<Object> args) throws Exception;
}
