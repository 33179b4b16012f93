/**
 * The distributed optimizer, as {@code torch.distributed.optim}: {@link
 * io.tensorbus.distributed.optim.DistributedOptimizer} steps local optimizers on the workers that own the parameters
 * with a distributed autograd context's gradients.
 *
 * <p>Threads: thread-safe; the blocking forms must not run on an event loop. Local optimizers step on their
 * owner's RPC pool, one step at a time per process.
 */
package io.tensorbus.distributed.optim;
