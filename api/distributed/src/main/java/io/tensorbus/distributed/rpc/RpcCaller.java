package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import java.time.Duration;

/** What sends a call to a worker: all the RRef protocol needs of the call path. */
interface RpcCaller {
    /**
     * Calls {@code function} on {@code to} with {@code args}; never blocks.
     *
     * @param timeout how long the call may take before its future fails with {@link RpcTimeoutException}
     */
    <T> Future<T> rpcAsync(WorkerInfo to, Duration timeout, String function, Object... args);
}
