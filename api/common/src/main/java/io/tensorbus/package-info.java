/**
 * The types tensors and plugins share, with no dependencies: {@link io.tensorbus.DType} (PyTorch's
 * {@code torch.float32} and friends) and {@link io.tensorbus.Device}.
 *
 * <p>Threads: immutable values, usable from any thread.
 */
package io.tensorbus;
