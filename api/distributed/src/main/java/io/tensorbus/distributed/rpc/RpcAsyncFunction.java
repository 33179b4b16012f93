package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import java.util.List;

/**
 * A function that answers later (PyTorch's {@code @rpc.functions.async_execution}): it returns a
 * {@link Future} at once, holds no thread while it waits (for another RPC, say), and the reply is sent when
 * the future completes.
 */
@FunctionalInterface
public interface RpcAsyncFunction {
    /**
     * Starts the call.
     *
     * @param args the caller's arguments, decoded
     * @return the future result (a failed future reaches the caller as a {@link RemoteException})
     * @throws Exception a failure before any future exists, treated as a failed future
     */
    Future<?> apply(List<Object> args) throws Exception;
}
