package io.tensorbus.tensor;

import io.tensorbus.Device;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.Objects;

/**
 * The memory behind one or more tensors: an off-heap, 64-byte-aligned {@link MemorySegment} that the
 * network and native devices can read without a copy, plus the version counter that autograd uses to
 * detect in-place changes to tensors saved for backward.
 *
 * <p>Storage on a device ({@code opencl:0}, {@code cuda:0}) holds a buffer of that device's runtime instead of
 * host memory; {@link #segment()} is then unavailable, and the host-only kernels that ask for it fail naming the
 * operation and the device.
 *
 * <p>Views share a storage (and so its version). Memory is freed by the garbage collector once no
 * tensor refers to it (device memory through its runtime, by a cleaner).
 */
public final class Storage {
    /** Alignment of every allocation, in bytes: one cache line, and the widest vector register. */
    public static final long ALIGNMENT = 64;

    private static final Cleaner DEVICE_MEMORY = Cleaner.create();

    private final MemorySegment segment;
    private final DeviceBuffer deviceBuffer;
    private int version;

    private Storage(MemorySegment segment) {
        this.segment = segment;
        this.deviceBuffer = null;
    }

    private Storage(DeviceBuffer buffer, DeviceRuntime runtime, boolean owned) {
        this.segment = null;
        this.deviceBuffer = buffer;
        if (owned) {
            DEVICE_MEMORY.register(this, () -> runtime.release(buffer));
        }
    }

    /**
     * Storage in device memory: {@code owned} buffers are released through {@code runtime} once no tensor
     * refers to them; wrapped ones (the user's memory) are left to their owner.
     */
    static Storage onDevice(DeviceBuffer buffer, DeviceRuntime runtime, boolean owned) {
        return new Storage(buffer, runtime, owned);
    }

    /**
     * Allocates zero-filled storage.
     *
     * @param byteSize size in bytes, at least 0
     * @throws IllegalArgumentException when {@code byteSize} is negative
     */
    public static Storage allocate(long byteSize) {
        if (byteSize < 0) {
            throw new IllegalArgumentException("storage size must be >= 0 bytes, got " + byteSize);
        }
        NativeMemoryPacer.beforeAllocate(byteSize);
        // Arena.ofAuto: freed by the GC when unreachable; allocate() returns zeroed memory.
        Storage s = new Storage(Arena.ofAuto().allocate(Math.max(byteSize, 1), ALIGNMENT).asSlice(0, byteSize));
        NativeMemoryPacer.track(s, byteSize);
        return s;
    }

    /**
     * Wraps existing memory (a mapped file, a network buffer) without copying. The caller keeps the
     * segment's arena alive for as long as tensors use it.
     */
    public static Storage wrap(MemorySegment segment) {
        return new Storage(Objects.requireNonNull(segment, "segment"));
    }

    /**
     * The memory itself. Writing to it directly bypasses autograd's version check.
     *
     * @throws UnsupportedOperationException when the storage is on a device (the message names the operation
     *         that asked for host memory)
     */
    public MemorySegment segment() {
        if (segment == null) {
            throw DeviceOps.unsupported(deviceBuffer.device());
        }
        return segment;
    }

    /** Where the memory lives. */
    public Device device() {
        return deviceBuffer == null ? Device.CPU : deviceBuffer.device();
    }

    /** The device buffer of device storage, or null for host memory. */
    DeviceBuffer deviceBuffer() {
        return deviceBuffer;
    }

    /** Size in bytes. */
    public long byteSize() {
        return segment != null ? segment.byteSize() : deviceBuffer.byteSize();
    }

    /** How many in-place changes this storage has seen; autograd compares it with the version at save time. */
    public int version() {
        return version;
    }

    /** Records an in-place change (called by every in-place op). */
    public void bumpVersion() {
        version++;
    }
}
