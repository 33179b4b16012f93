/**
 * Reverse-mode automatic differentiation, as {@code torch.autograd}: the graph of
 * {@link io.tensorbus.autograd.Node}s recorded by operations on tensors that require grad, the
 * {@link io.tensorbus.autograd.Engine} that runs it backward, hooks, and {@link io.tensorbus.autograd.GradMode}.
 *
 * <p>Threads: {@code backward} runs on the calling thread, and so do the hooks and the callbacks it queues.
 * Grad mode ({@code noGrad}) is per thread, as in PyTorch.
 */
package io.tensorbus.autograd;
