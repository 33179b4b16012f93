/**
 * The autograd engine, as PyTorch's {@code torch/csrc/autograd/engine}: {@link io.tensorbus.internal.autograd.Engine}
 * runs a backward pass ({@link io.tensorbus.internal.autograd.GraphTask}) over the graph of {@code Node}s, and
 * distributed autograd and DDP build on its entry points. Not an API: users run backward through
 * {@code io.tensorbus.autograd.Autograd} and {@code Tensor.backward}.
 *
 * <p>Threads: a pass runs on the thread that started it, and so do the hooks and the callbacks it queues; a
 * distributed pass is fed one thread at a time.
 */
package io.tensorbus.internal.autograd;
