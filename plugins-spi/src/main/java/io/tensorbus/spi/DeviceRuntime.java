package io.tensorbus.spi;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.util.List;

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
     * Copies {@code bytes} bytes from {@code src} at {@code srcOffset} to {@code dst} at {@code dstOffset}:
     * host to device, device to host or device to device.
     *
     * @throws IllegalArgumentException when a range lies outside its buffer or a buffer belongs to another runtime
     */
    Future<Void> copy(DeviceBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

    /**
     * Combines {@code bytes} bytes of {@code src} into {@code acc} element by element on {@code acc}'s device,
     * {@code acc[i] = acc[i] op src[i]}, with the semantics of {@link HostReductions#reduceInto} (NaN propagates
     * through MAX and MIN, half-precision types combine in float32, AVG sums). {@code src} may be host memory:
     * it is copied to the device first.
     *
     * @throws IllegalArgumentException when the dtypes differ, a range lies outside its buffer or {@code op} is
     *         not defined for the dtype
     */
    Future<Void> reduce(ReduceOp op, DeviceBuffer acc, long accOffset, DeviceBuffer src, long srcOffset, long bytes);

    /**
     * Divides {@code bytes} bytes of {@code acc} from {@code offset} by {@code divisor}: the last step of
     * {@link ReduceOp#AVG}.
     *
     * @throws IllegalArgumentException for a dtype that is not floating point or a divisor below 1
     */
    Future<Void> divide(DeviceBuffer acc, long offset, long bytes, int divisor);

    /**
     * Frees a buffer this runtime allocated once the operations queued on it have finished; a wrapped buffer
     * (memory its owner allocated) is only forgotten. Idempotent.
     */
    void release(DeviceBuffer buffer);
}
