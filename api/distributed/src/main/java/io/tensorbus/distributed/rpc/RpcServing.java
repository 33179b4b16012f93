package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import java.util.List;
import java.util.concurrent.Callable;

/** How a worker runs what is called on it: the registered functions, on its pool of virtual threads. */
interface RpcServing {
    /** Runs the function of {@code values} ({@code [function, args...]}) that {@code caller} called. */
    Future<Object> invoke(WorkerInfo caller, List<Object> values);

    /** Runs {@code task} on the worker's pool, with {@link RpcAgent#current()} set to the worker's agent. */
    <T> Future<T> onPool(Callable<T> task);
}
