/**
 * PyTorch's {@code torch.distributed.algorithms} that more than DDP uses: the general join context for uneven
 * inputs ({@link io.tensorbus.distributed.algorithms.Join}, {@link io.tensorbus.distributed.algorithms.Joinable},
 * {@link io.tensorbus.distributed.algorithms.JoinHook}), model averaging
 * ({@link io.tensorbus.distributed.algorithms.PeriodicModelAverager}), and the communication-hook contract
 * ({@link io.tensorbus.distributed.algorithms.CommHook} over a
 * {@link io.tensorbus.distributed.algorithms.GradBucket}) with the built-in hooks beside it, as
 * {@code torch.distributed.algorithms.ddp_comm_hooks}: {@link io.tensorbus.distributed.algorithms.CommHooks}
 * (all-reduce, fp16 and bf16 compression, PowerSGD with
 * {@link io.tensorbus.distributed.algorithms.PowerSGDState}, quantization, post-local SGD with
 * {@link io.tensorbus.distributed.algorithms.PostLocalSGDState}, noop). DistributedDataParallel
 * ({@code io.tensorbus.parallel}) and the optimizers of {@code io.tensorbus.distributed.optim} build on them.
 *
 * <p>Threads: a join context and its hooks run on the training thread and block there; a communication hook's
 * body runs on the thread of the backward pass and its collectives complete on the group's event loop; model
 * averaging blocks the calling thread (never an event loop).
 */
package io.tensorbus.distributed.algorithms;
