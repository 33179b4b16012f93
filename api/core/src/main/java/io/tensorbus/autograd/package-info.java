/**
 * Reverse-mode automatic differentiation, as {@code torch.autograd}: the graph of
 * {@link io.tensorbus.autograd.Node}s recorded by operations on tensors that require grad, backward passes
 * ({@link io.tensorbus.autograd.Autograd}), hooks, and {@link io.tensorbus.autograd.GradMode}. The engine that
 * runs a pass is internal ({@code io.tensorbus.internal.autograd}).
 *
 * <p>Threads: {@code backward} runs on the calling thread, and so do the hooks and the callbacks it queues.
 * Grad mode ({@code noGrad}) is per thread, as in PyTorch.
 */
package io.tensorbus.autograd;
