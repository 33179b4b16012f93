/**
 * PyTorch's {@code torch.distributed.algorithms} that more than DDP uses: the general join context for uneven
 * inputs ({@link io.tensorbus.distributed.algorithms.Join}, {@link io.tensorbus.distributed.algorithms.Joinable},
 * {@link io.tensorbus.distributed.algorithms.JoinHook}), model averaging
 * ({@link io.tensorbus.distributed.algorithms.PeriodicModelAverager}), and the communication-hook contract
 * ({@link io.tensorbus.distributed.algorithms.CommHook} over a
 * {@link io.tensorbus.distributed.algorithms.GradBucket}) whose built-in hooks are in
 * {@code io.tensorbus.parallel.CommHooks}. DistributedDataParallel ({@code io.tensorbus.parallel}) and the
 * optimizers of {@code io.tensorbus.distributed.optim} both build on them.
 *
 * <p>Threads: a join context and its hooks run on the training thread and block there; a communication hook's
 * body runs on the thread of the backward pass and its collectives complete on the group's event loop; model
 * averaging blocks the calling thread (never an event loop).
 */
package io.tensorbus.distributed.algorithms;
