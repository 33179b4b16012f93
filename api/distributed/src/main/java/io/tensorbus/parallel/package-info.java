/**
 * Data parallelism (PyTorch's {@code torch.nn.parallel} and {@code torch.utils.data.distributed}):
 * {@link io.tensorbus.parallel.DistributedDataParallel} with its bucketed gradient reducer, and the
 * {@link io.tensorbus.parallel.DistributedSampler} that gives each rank its share of a dataset. DDP's
 * communication hooks, the contract and the built-in ones, are in {@code io.tensorbus.distributed.algorithms};
 * checkpoints are in {@code io.tensorbus.distributed.checkpoint}.
 *
 * <p>Threads: the forward pass, the backward pass (and the reducer's autograd hooks with it) and the
 * communication hooks' bodies run on the training thread; bucket all-reduces run on the group's event loop
 * and complete there, and DDP copies their results into the gradients on the training thread.
 */
package io.tensorbus.parallel;

