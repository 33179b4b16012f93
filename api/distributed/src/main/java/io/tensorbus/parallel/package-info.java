/**
 * Data parallelism (PyTorch's {@code torch.nn.parallel} and {@code torch.utils.data.distributed}):
 * {@link io.tensorbus.parallel.DistributedDataParallel} with its bucketed gradient reducer, communication
 * hooks ({@link io.tensorbus.parallel.CommHook}, {@link io.tensorbus.parallel.CommHooks}), the
 * {@link io.tensorbus.parallel.DistributedSampler} that gives each rank its share of a dataset, and
 * {@link io.tensorbus.parallel.Checkpoint}: rank 0 saves, every rank loads.
 */
package io.tensorbus.parallel;
