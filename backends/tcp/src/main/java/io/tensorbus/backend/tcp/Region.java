package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A byte range that the collective algorithms send, receive and reduce: host memory, which goes to and from the
 * sockets directly, or a range of a device buffer, which {@link CollectiveOp} stages through host memory chunk by
 * chunk and reduces on the device with the buffer's {@link DeviceRuntime}. Algorithms only cut regions
 * ({@link #slice}); what moves them is the op's business.
 */
final class Region {
    private final MemorySegment host;
    private final DeviceBuffer device;
    private final DeviceRuntime runtime;
    private final long offset;
    private final long bytes;

    private Region(MemorySegment host, DeviceBuffer device, DeviceRuntime runtime, long offset, long bytes) {
        this.host = host;
        this.device = device;
        this.runtime = runtime;
        this.offset = offset;
        this.bytes = bytes;
    }

    /** All of {@code buffer}: its host memory, or its device memory through the runtime of its device. */
    static Region of(DeviceBuffer buffer) {
        if (buffer.isHost()) {
            return host(buffer.segment());
        }
        return new Region(null, buffer, DeviceRuntimeProvider.of(buffer.device()), 0, buffer.byteSize());
    }

    /** Every buffer of {@code buffers}, in order. */
    static List<Region> of(List<DeviceBuffer> buffers) {
        List<Region> out = new ArrayList<>(buffers.size());
        for (DeviceBuffer b : buffers) {
            out.add(of(b));
        }
        return out;
    }

    /** Host memory. */
    static Region host(MemorySegment segment) {
        return new Region(segment, null, null, 0, segment.byteSize());
    }

    /** A region of device memory: {@code bytes} bytes of {@code buffer} from {@code offset}. */
    static Region device(DeviceBuffer buffer, DeviceRuntime runtime, long offset, long bytes) {
        return new Region(null, buffer, runtime, offset, bytes);
    }

    long byteSize() {
        return bytes;
    }

    boolean isHost() {
        return host != null;
    }

    /** The host memory of a host region. */
    MemorySegment segment() {
        return host;
    }

    /** The device buffer of a device region. */
    DeviceBuffer buffer() {
        return device;
    }

    /** Where a device region starts in its buffer, in bytes. */
    long offset() {
        return offset;
    }

    DeviceRuntime runtime() {
        return runtime;
    }

    /** The element type of a device region's buffer. */
    DType dtype() {
        return device.dtype();
    }

    /** {@code length} bytes from {@code from}, relative to this region. */
    Region slice(long from, long length) {
        if (from < 0 || length < 0 || from + length > bytes) {
            throw new IndexOutOfBoundsException("slice [" + from + ", " + (from + length) + ") of " + bytes + " bytes");
        }
        return host != null ? host(host.asSlice(from, length)) : device(device, runtime, offset + from, length);
    }

    /** Host memory as a buffer of {@code dtype}, so that a device runtime can copy or reduce from it. */
    static DeviceBuffer asBuffer(MemorySegment segment, DType dtype) {
        return DeviceBuffer.host(segment, dtype, segment.byteSize() / dtype.byteSize());
    }

    @Override
    public String toString() {
        return host != null ? "host[" + bytes + " bytes]" : device + "[" + offset + ", +" + bytes + "]";
    }
}
