/**
 * Tensors ({@link io.tensorbus.tensor.Tensor}: dtype, shape, strides, off-heap storage), views, factories and
 * the CPU operations on them, as {@code torch.Tensor}.
 *
 * <p>Threads: an operation runs on the thread that calls it; large kernels split their work over the compute
 * pool ({@link io.tensorbus.tensor.Threads}, PyTorch's {@code set_num_threads}), the calling thread taking a
 * share. A tensor is not safe to change from two threads at once. tensorbus never runs these operations on a
 * Vert.x event loop, and neither should an application: compute on a worker, a virtual thread or {@code main}.
 */
package io.tensorbus.tensor;
