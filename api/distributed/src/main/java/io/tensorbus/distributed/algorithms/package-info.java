/**
 * PyTorch's {@code torch.distributed.algorithms} that more than DDP uses: the general join context for uneven
 * inputs ({@link io.tensorbus.distributed.algorithms.Join}, {@link io.tensorbus.distributed.algorithms.Joinable},
 * {@link io.tensorbus.distributed.algorithms.JoinHook}), model averaging
 * ({@link io.tensorbus.distributed.algorithms.PeriodicModelAverager}), and the communication-hook contract
 * ({@link io.tensorbus.distributed.algorithms.CommHook} over a
 * {@link io.tensorbus.distributed.algorithms.GradBucket}) whose built-in hooks are in
 * {@code io.tensorbus.parallel.CommHooks}. DistributedDataParallel ({@code io.tensorbus.parallel}) and the
 * optimizers of {@code io.tensorbus.distributed.optim} both build on them.
 */
package io.tensorbus.distributed.algorithms;
