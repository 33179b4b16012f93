/**
 * Internals the tensor, autograd and nn packages share: the CPU kernels (GEMM, im2col, pooling, element-wise
 * loops on the Vector API), shape arithmetic, and {@link io.tensorbus.internal.tensor.TensorInternals}, PyTorch's
 * {@code AutogradMeta} and storage access. Not an API: it changes without notice, and user code never imports it.
 *
 * <p>Threads: kernels run on the calling thread and the compute pool's workers.
 */
package io.tensorbus.internal.tensor;
