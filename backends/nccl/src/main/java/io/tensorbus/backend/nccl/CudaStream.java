package io.tensorbus.backend.nccl;

import io.tensorbus.spi.DeviceBuffer;

/**
 * The CUDA side of one group, as the backend needs it: the stream NCCL's work is queued on, events recorded
 * after that work to learn without blocking when it finished, and the device address of a buffer. The CUDA
 * device runtime provides it; tests use a double.
 */
interface CudaStream {

    /**
     * Makes the stream's device current on the calling thread: NCCL takes its device from the thread that calls
     * it, so every thread that issues NCCL calls does this first.
     */
    void makeCurrent();

    /** The {@code cudaStream_t} handle. */
    long handle();

    /** Records an event after the work queued on the stream so far. */
    long recordEvent();

    /**
     * True once the work before {@code event} finished ({@code cudaEventQuery}, which never blocks).
     *
     * @throws IllegalStateException when the device reports an error
     */
    boolean isDone(long event);

    /** Frees an event. */
    void releaseEvent(long event);

    /**
     * The device address of {@code buffer}'s first byte.
     *
     * @throws IllegalArgumentException when the buffer is not CUDA memory of this stream's device
     */
    long address(DeviceBuffer buffer);
}
