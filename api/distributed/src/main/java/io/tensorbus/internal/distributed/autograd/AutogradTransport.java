package io.tensorbus.internal.distributed.autograd;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * What distributed autograd needs of the RPC agent that drives it: who this worker is, internal calls to other
 * workers (never recorded in a context), and the worker's pool to compute on.
 */
public interface AutogradTransport {
    /** This worker's id (its rank in the RPC job). */
    int self();

    /** How many workers the job has; worker ids are 0 to {@code worldSize() - 1}. */
    int worldSize();

    /** Worker {@code id} as messages name it ({@code name (rank n)}). */
    String describe(int id);

    /** The agent's timeout: the deadline of a backward pass and of each internal call. */
    Duration timeout();

    /** Calls the internal function {@code function} on worker {@code to}; the call is never recorded. */
    Future<Object> call(int to, String function, List<Object> args);

    /** Runs {@code task} on the worker's pool of virtual threads. */
    <T> Future<T> onPool(Callable<T> task);
}
