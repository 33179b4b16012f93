/**
 * Neural-network layers and functions, as {@code torch.nn} and {@code torch.nn.functional}:
 * {@link io.tensorbus.nn.Module} with named parameters, buffers and state dicts, the layers, losses and
 * {@link io.tensorbus.nn.Functional}.
 *
 * <p>Threads: a module computes on the thread that calls {@code forward}; the kernels use the compute pool as
 * tensor operations do. A module is not safe to run from two threads at once.
 */
package io.tensorbus.nn;
