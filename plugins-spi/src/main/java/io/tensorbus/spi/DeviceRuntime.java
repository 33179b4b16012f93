package io.tensorbus.spi;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The memory and arithmetic of one kind of device, as backends and tensors need them: allocate and release
 * buffers, copy between host and device and between devices, and the element-wise reductions of collectives.
 *
 * <p>Every operation is asynchronous: it is queued on the device's in-order queue (an OpenCL command queue, a
 * CUDA stream), so operations on one device run in the order they were called, and the returned future
 * completes, on a thread of the runtime, once the device has finished it (observed with device events, never
 * by blocking an event loop). A buffer handed to an operation, host memory included, must stay untouched until
 * its future completes. Offsets and lengths are in bytes and must be multiples of the buffer's element size.
 * Host buffers ({@link DeviceBuffer#host}) may appear wherever a copy or a reduction's source is expected.
 *
 * <p>The futures are the JDK's {@link CompletableFuture}s, not Vert.x's: tensors on devices live in
 * {@code tensorbus-core}, which has no Vert.x on its class path (a backend adapts them with
 * {@code Future.fromCompletionStage}). Failures are reported through the future, never thrown, except for
 * {@link #allocate} and {@link #wrap}.
 */
public interface DeviceRuntime {

    /** The device type, as {@link DeviceRuntimeProvider#type()}. */
    String type();

    /** The devices of this runtime, indexed as their {@link Device#index()}. */
    List<DeviceInfo> devices();

    /**
     * A zero-filled buffer on {@code device}.
     *
     * @throws IllegalArgumentException when the device is not one of {@link #devices()}, the shape has a
     *         negative extent or the size exceeds what the device can allocate
     */
    DeviceBuffer allocate(Device device, DType dtype, long... shape);

    /**
     * A zero-filled buffer where {@code near}'s memory lives: on its device and, for a runtime with several
     * contexts (OpenCL, where a wrapped {@code cl_mem} keeps its own), in its context, so that kernels can combine
     * the two. Results of operations on a buffer are allocated this way.
     *
     * @throws IllegalArgumentException when {@code near} is not this runtime's memory, or the shape is invalid
     */
    DeviceBuffer allocateNear(DeviceBuffer near, DType dtype, long... shape);

    /**
     * A buffer over {@code numel(shape)} elements of {@code dtype} from byte {@code offset} of {@code buffer}, sharing
     * its memory: a view, which every operation takes like any buffer. Releasing a view does nothing; its memory
     * lives as long as {@code buffer}'s owner keeps it.
     *
     * @throws IllegalArgumentException when the range lies outside the buffer, the offset is not a multiple of
     *         {@code dtype}'s size, or {@code buffer} is not this runtime's memory
     */
    DeviceBuffer view(DeviceBuffer buffer, long offset, DType dtype, long... shape);

    /**
     * Copies {@code bytes} bytes from {@code src} at {@code srcOffset} to {@code dst} at {@code dstOffset}:
     * host to device, device to host or device to device.
     *
     * @throws IllegalArgumentException when a range lies outside its buffer or a buffer belongs to another runtime
     */
    CompletableFuture<Void> copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /**
     * Combines {@code bytes} bytes of {@code src} into {@code acc} element by element on {@code acc}'s device,
     * {@code acc[i] = acc[i] op src[i]}, with the semantics of the host's ({@code HostReductions}): NaN propagates
     * through MAX and MIN, half-precision types combine in float32, AVG sums. {@code src} may be host memory:
     * it is copied to the device first.
     *
     * @throws IllegalArgumentException when the dtypes differ, a range lies outside its buffer or {@code op} is
     *         not defined for the dtype
     */
    CompletableFuture<Void> reduce(ReduceOp op, DeviceBuffer acc, long accOffset, DeviceBuffer src, long srcOffset,
            long bytes);

    /**
     * Divides {@code bytes} bytes of {@code acc} from {@code offset} by {@code divisor}: the last step of
     * {@link ReduceOp#AVG}.
     *
     * @throws IllegalArgumentException for a dtype that is not floating point or a divisor below 1
     */
    CompletableFuture<Void> divide(DeviceBuffer acc, long offset, long bytes, int divisor);

    /**
     * Wraps device memory that other code allocated, without copying, so that tensors and collectives use it in
     * place; the caller keeps ownership ({@link #release} only forgets it).
     *
     * @param memory the runtime's handle of the memory: a JOCL {@code cl_mem} for OpenCL, a device pointer for
     *        CUDA (a JCuda {@code CUdeviceptr} or its address as a {@link Long})
     * @throws IllegalArgumentException when the handle is not this runtime's kind of memory, or is smaller than
     *         {@code numel(shape) * dtype.byteSize()} bytes
     */
    DeviceBuffer wrap(Device device, Object memory, DType dtype, long... shape);

    /**
     * Sets every element of {@code dst} to {@code value}, converted as a host store of that dtype would
     * (integers truncate toward zero, bools are {@code value != 0}).
     */
    CompletableFuture<Void> fill(DeviceBuffer dst, double value);

    /**
     * {@code out[i] = a[i] op b[i]}, where {@code b} has as many elements as {@code a} or exactly one (a scalar
     * operand). All three share one dtype; half-precision types compute in float32 and round to nearest even.
     *
     * @throws IllegalArgumentException (through the future) for mismatched dtypes or sizes, or an op the dtype
     *         does not support (division of integers, arithmetic on bools)
     */
    CompletableFuture<Void> elementwise(ElementwiseOp op, DeviceBuffer a, DeviceBuffer b, DeviceBuffer out);

    /**
     * {@code out[i] = a[i] op b}: as {@link #elementwise(ElementwiseOp, DeviceBuffer, DeviceBuffer, DeviceBuffer)}
     * with a scalar, which is converted to the computation type (float32 for float32 and the half types, float64,
     * int64 for integers) rather than to the tensors' dtype, as the host's scalar arithmetic does.
     */
    CompletableFuture<Void> elementwise(ElementwiseOp op, DeviceBuffer a, double b, DeviceBuffer out);

    /**
     * Converts every element of {@code src} into {@code dst}'s dtype, as the host's conversions do: floating
     * point to integers truncates toward zero and saturates at the 64-bit range, NaN becomes 0, bools are
     * {@code != 0}, and narrowing floats round to nearest even.
     */
    CompletableFuture<Void> cast(DeviceBuffer src, DeviceBuffer dst);

    /**
     * Writes the sum of all elements of {@code src} into the single element of {@code out}: floating-point sums
     * accumulate in float64 where the device has it (the order differs from the host's, so the last bits may),
     * integers and bools in int64.
     */
    CompletableFuture<Void> sum(DeviceBuffer src, DeviceBuffer out);

    /**
     * Runs kernel {@code kernel} of {@code program} over {@code items} work items on the device of the first
     * buffer in {@code args}, in that device's queue order. Arguments are {@link DeviceBuffer}s (each passed as a
     * pointer and an element offset, see {@link KernelSource}), {@link Integer}s ({@code int}), {@link Long}s
     * ({@code long} or {@code ulong}), {@link Float}s and {@link Double}s. The program is compiled on first use.
     *
     * @param groupSize the work items of one work-group (CUDA block), dividing {@code items}, for kernels that
     *        share {@code LOCAL_MEM}; 0 lets the runtime choose, and then it may run more items than asked, so the
     *        kernel must check its index against its size
     * @throws IllegalArgumentException (through the future) for no buffer argument, buffers a kernel cannot
     *         combine (other devices or contexts), an argument of another type, or a group size that does not
     *         divide {@code items}; a program that does not compile fails the future with the compiler's log
     */
    CompletableFuture<Void> launch(KernelSource program, String kernel, long items, int groupSize, Object... args);

    /**
     * {@code C = alpha * op(A) op(B) + beta * C} for {@code batch} matrices, where {@code op(A)} is {@code m x k},
     * {@code op(B)} is {@code k x n} and {@code C} is {@code m x n}, all of one floating dtype (float32 or
     * float64) on one device: the field's BLAS where the runtime has one (CLBlast, cuBLAS). Sums may run in
     * another order than the host's, so the last bits may differ.
     *
     * @throws IllegalArgumentException (through the future) for mixed or integer dtypes, a transposed {@code c},
     *         a leading dimension too small for its rows, or matrices outside their buffers
     */
    CompletableFuture<Void> gemm(int batch, int m, int n, int k, double alpha, GemmOperand a, GemmOperand b,
            double beta, GemmOperand c);

    /**
     * Frees a buffer this runtime allocated once the operations queued on it have finished; a wrapped buffer
     * (memory its owner allocated) is only forgotten. Idempotent.
     */
    void release(DeviceBuffer buffer);
}
