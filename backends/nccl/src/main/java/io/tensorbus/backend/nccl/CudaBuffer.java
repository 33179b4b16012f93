package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.spi.support.DeviceArguments;
import io.tensorbus.spi.DeviceBuffer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * CUDA device memory holding one tensor's elements: the device address of its first byte, which the runtime
 * allocated ({@code owned}, freed on {@link CudaRuntime#release}), the user's own code allocated (wrapped, never
 * freed by us), or which lies inside another buffer (a view).
 */
final class CudaBuffer implements DeviceBuffer {
    private final CudaDevice device;
    private final long address;
    private final DType dtype;
    private final long[] shape;
    private final boolean owned;
    private final AtomicBoolean released = new AtomicBoolean();

    CudaBuffer(CudaDevice device, long address, DType dtype, long[] shape, boolean owned) {
        this.device = device;
        this.address = address;
        this.dtype = dtype;
        this.shape = shape.clone();
        this.owned = owned;
        DeviceArguments.numel(this.shape);
    }

    CudaDevice cuda() {
        return device;
    }

    /** The device address of the first element. */
    long address() {
        return address;
    }

    @Override
    public Device device() {
        return device.device();
    }

    @Override
    public DType dtype() {
        return dtype;
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    @Override
    public long numel() {
        return DeviceArguments.numel(shape);
    }

    /** CUDA memory is not host memory. */
    @Override
    public MemorySegment segment() {
        throw new UnsupportedOperationException(this + " is device memory on " + device()
                + ": copy it to the host first");
    }

    /** Frees the memory once if this buffer owns it. */
    void release() {
        if (owned && released.compareAndSet(false, true)) {
            device.free(address);
        }
    }

    @Override
    public String toString() {
        return dtype + Arrays.toString(shape) + "@" + device();
    }
}
