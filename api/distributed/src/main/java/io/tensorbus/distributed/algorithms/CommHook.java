package io.tensorbus.distributed.algorithms;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;

/**
 * How a bucket of gradients is communicated (PyTorch's DDP communication hook,
 * {@code register_comm_hook}). DistributedDataParallel calls it once per bucket and iteration, on the
 * thread running the backward pass, in bucket order on every rank; the hook must issue the same
 * collectives in the same order on every rank.
 *
 * <p>The returned future completes with a tensor of the bucket's element count that holds the averaged
 * gradients (the bucket's own buffer may be returned). A hook must issue all its collectives before it
 * returns: one started later from a future's callback would race with the next bucket's and could reach
 * the ranks in different orders. A hook whose second collective needs the first one's result (PowerSGD's)
 * waits for the first in its body, on the backward thread, never on an event loop. The future's continuations
 * run on the group's event loop, which must never compute: do the tensor work in the hook's body (on the backward
 * thread) or on a thread of its own, and return the reduced tensor, in any floating dtype; DDP copies it into the
 * bucket on the training thread. Built-in hooks are in
 * {@link io.tensorbus.distributed.algorithms.CommHooks}.
 */
@FunctionalInterface
public interface CommHook {
    /**
     * Starts communicating {@code bucket}; must not wait except as the class comment allows.
     *
     * @param group the DistributedDataParallel's process group
     * @param bucket this rank's local, not yet averaged gradients
     * @return a future of the averaged gradients of the bucket
     */
    Future<Tensor> apply(ProcessGroup group, GradBucket bucket);
}
