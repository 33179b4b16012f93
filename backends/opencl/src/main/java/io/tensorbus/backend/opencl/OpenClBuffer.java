package io.tensorbus.backend.opencl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.spi.DeviceBuffer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jocl.CL;
import org.jocl.cl_mem;

/**
 * A buffer in OpenCL device memory: a {@code cl_mem} (null for zero bytes) of the context it belongs to, with
 * the dtype and shape it holds. {@code owned} buffers were allocated by the runtime and are freed by
 * {@link OpenClRuntime#release}; wrapped ones belong to the user's code, and views (a range of another buffer's
 * memory object, from {@link #offset()}) to their buffer's owner.
 */
final class OpenClBuffer implements DeviceBuffer {
    private final OpenClContext context;
    private final cl_mem mem;
    /** Where this buffer starts in {@link #mem}, in bytes (non-zero for views). */
    private final long offset;
    private final DType dtype;
    private final long[] shape;
    private final long numel;
    private final boolean owned;
    private final AtomicBoolean released = new AtomicBoolean();

    OpenClBuffer(OpenClContext context, cl_mem mem, DType dtype, long[] shape, boolean owned) {
        this(context, mem, 0, dtype, shape, owned);
    }

    OpenClBuffer(OpenClContext context, cl_mem mem, long offset, DType dtype, long[] shape, boolean owned) {
        this.context = context;
        this.mem = mem;
        this.offset = offset;
        this.dtype = dtype;
        this.shape = shape.clone();
        this.numel = OpenClRuntime.numel(shape);
        this.owned = owned;
    }

    OpenClContext context() {
        return context;
    }

    /** Where this buffer starts in its memory object, in bytes. */
    long offset() {
        return offset;
    }

    /** The memory object, or null for a buffer of zero bytes. */
    cl_mem mem() {
        if (released.get()) {
            throw new IllegalStateException("OpenCL buffer " + this + " was released");
        }
        return mem;
    }

    /** Frees the memory once queued commands are done with it (OpenCL counts their references); idempotent. */
    void release() {
        if (released.compareAndSet(false, true) && owned && mem != null) {
            CL.clReleaseMemObject(mem);
        }
    }

    @Override
    public Device device() {
        return context.device();
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
        return numel;
    }

    @Override
    public MemorySegment segment() {
        throw new UnsupportedOperationException("buffer " + this + " is in OpenCL device memory, which the host "
                + "cannot address; copy it with the OpenCL runtime");
    }

    @Override
    public String toString() {
        return dtype + Arrays.toString(shape) + " on " + device() + (offset == 0 ? "" : " at byte " + offset);
    }
}
