package io.tensorbus.distributed.autograd;

import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.List;
import java.util.Map;

/**
 * {@code torch.distributed.autograd} for one RPC worker ({@code RpcAgent.distAutograd()}): a forward pass that
 * runs inside a {@link #context()} records every RPC that carries tensors requiring grad, and
 * {@link #backward(long, List, boolean)} then runs the backward pass across every worker those RPCs reached,
 * accumulating each worker's gradients in the context ({@link #getGradients}), never in {@code .grad}.
 *
 * <pre>{@code
 * DistAutograd dist = agent.distAutograd();
 * try (DistAutograd.Context context = dist.context()) {
 *     Tensor t3 = agent.rpcSync("worker1", "my_add", t1, t2);
 *     Tensor loss = t3.mul(t4).sum();
 *     dist.backward(context.id(), List.of(loss));
 *     Map<Tensor, Tensor> grads = dist.getGradients(context.id());
 * }
 * }</pre>
 *
 * <p>Thread-safe. A context is current on the thread that opened it, and, while they run, on the threads that
 * serve the calls it reached; contexts on different threads are independent.
 */
public interface DistAutograd {
    /** How a backward pass learns which send functions of a context it must wait for. */
    enum Mode {
        /**
         * PyTorch's only mode (the seed's 5.2): every send function of the context is assumed to receive a
         * gradient. Cheapest. When one does not (an RPC of the context whose result does not reach the roots, the
         * seed's 5.1 example), the gradients that wait for it are incomplete, so the backward pass fails as soon as
         * the rest of it has run, with a {@link DistAutogradException} naming the RPCs and this worker, rather than
         * return with gradients missing (PyTorch's waits for them until its RPC timeout). Use {@link #SMART} for
         * such graphs.
         */
        FAST,
        /**
         * The seed's 5.3, which PyTorch never built: before the pass, the workers walk their graphs from the roots
         * across RPCs and prune the send functions the roots do not reach, so the gradients equal those of the same
         * computation in one process. Costs one discovery round trip per hop of the longest chain of workers.
         */
        SMART
    }

    /**
     * {@code with dist_autograd.context() as context_id}: a new context, current on this thread until it is
     * closed. Closing it releases it here and on every worker its RPCs reached.
     *
     * @throws IllegalStateException when this thread already has a current context (contexts do not nest, as in
     *     PyTorch) or the agent is shut down
     */
    Context context();

    /**
     * {@code dist_autograd.backward}: runs the backward pass of context {@code contextId} from {@code roots}
     * (scalars, on this worker) across every worker its RPCs reached, and completes once every worker's part has
     * finished. Never blocks.
     *
     * @param retainGraph keep the graph's saved tensors on every worker, for another backward pass
     * @return a future that fails naming the worker and the cause when a part fails, a worker is lost, or the
     *     agent's timeout passes, naming the RPCs when a send function got no gradient (see {@link Mode#FAST}),
     *     and with {@link IllegalStateException} for a second pass over a graph whose first did not retain it
     * @throws IllegalArgumentException for an unknown context, no roots, or a root that does not require grad or
     *     is not a scalar
     */
    Future<Void> backwardAsync(long contextId, List<Tensor> roots, boolean retainGraph);

    /**
     * {@link #backwardAsync(long, List, boolean)} in {@code mode}.
     *
     * @throws NullPointerException when {@code mode} is null
     */
    Future<Void> backwardAsync(long contextId, List<Tensor> roots, boolean retainGraph, Mode mode);

    /** The mode of the backward forms that take none. */
    Mode defaultMode();

    /**
     * {@link #backwardAsync} waiting for its end, within the agent's timeout.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread, which must never block
     * @throws RuntimeException the failure of {@link #backwardAsync}
     */
    void backward(long contextId, List<Tensor> roots, boolean retainGraph);

    /**
     * {@link #backwardAsync(long, List, boolean, Mode)} waiting for its end; the local part of the graph runs on
     * this thread.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread, which must never block
     */
    void backward(long contextId, List<Tensor> roots, boolean retainGraph, Mode mode);

    /** {@link #backward(long, List, boolean)} without retaining the graph. */
    default void backward(long contextId, List<Tensor> roots) {
        backward(contextId, roots, false);
    }

    /**
     * {@code dist_autograd.get_gradients}: the gradients context {@code contextId} accumulated on this worker,
     * keyed by tensor identity (a snapshot).
     *
     * @throws IllegalArgumentException when no context {@code contextId} is live on this worker
     */
    Map<Tensor, Tensor> getGradients(long contextId);

    /**
     * PyTorch's {@code _get_debug_info}: {@code num_current_contexts}, {@code num_send_functions},
     * {@code num_recv_functions} and {@code num_outstanding_rpcs} on this worker, for tests and leak checks.
     */
    Map<String, Long> debugInfo();

    /**
     * A distributed autograd context: its id names it in {@link #backward} and {@link #getGradients} on every
     * worker. {@link #close} releases it everywhere.
     */
    interface Context extends AutoCloseable {
        /** The context id, unique in the job ({@code context_id}). */
        long id();

        /**
         * Releases the context on this worker and on every worker its RPCs reached, and completes once they
         * have answered; it stops being current on the thread that opened it. Repeated calls are harmless.
         */
        Future<Void> release();

        /** {@link #release} without waiting for the other workers: they are told, and drop it when they hear. */
        @Override
        void close();
    }
}
