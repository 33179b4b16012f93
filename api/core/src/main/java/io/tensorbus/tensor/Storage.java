package io.tensorbus.tensor;

import io.tensorbus.Device;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * <p>Views share a storage (and so its version). Host memory comes from the {@link HostMemory host cache}
 * and goes back to it once nothing refers to its memory any more, or when it is {@linkplain #release()
 * released}; device memory is released through its runtime, by a cleaner.
 */
public final class Storage {
    /** Alignment of every allocation, in bytes: one cache line, and the widest vector register. */
    public static final long ALIGNMENT = 64;

    private static final Cleaner DEVICE_MEMORY = Cleaner.create();
    private static final VarHandle SCOPE;

    static {
        try {
            SCOPE = MethodHandles.lookup().findVarHandle(Storage.class, "scope", MemoryScope.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemorySegment segment;
    private final DeviceBuffer deviceBuffer;
    /** The host cache's block behind this storage, or null for wrapped and device memory. */
    private final CachingHostAllocator.Handout handout;
    private volatile boolean released;
    private boolean pooled;
    /** The {@link MemoryScope} that gives this storage back when it closes, or null. */
    private volatile MemoryScope scope;
    private int version;

    private Storage(MemorySegment segment) {
        this.segment = segment;
        this.deviceBuffer = null;
        this.handout = null;
    }

    private Storage(CachingHostAllocator.Handout handout, long byteSize) {
        this.segment = handout.segment().asSlice(0, byteSize);
        this.deviceBuffer = null;
        this.handout = handout;
    }

    private Storage(DeviceBuffer buffer, DeviceRuntime runtime, boolean owned) {
        this.segment = null;
        this.handout = null;
        this.deviceBuffer = buffer;
        if (owned) {
            DEVICE_MEMORY.register(this, () -> runtime.release(buffer));
        }
    }

    /**
     * Storage over a block of the caching device allocator: {@code giveBack} returns the block to its pool once no
     * tensor refers to it.
     */
    static Storage onDevicePooled(DeviceBuffer view, Runnable giveBack) {
        Storage s = new Storage(view, null, false);
        s.pooled = true;
        DEVICE_MEMORY.register(s, giveBack);
        return s;
    }

    /** True for storage from the caching device allocator, next to which results are pooled too. */
    boolean isPooled() {
        return pooled;
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
        return allocate(byteSize, true);
    }

    /**
     * Allocates storage whose bytes are unspecified (what a previous storage of the cache left): for outputs an
     * operation overwrites whole, which then skip the zero-fill.
     *
     * @param byteSize size in bytes, at least 0
     * @throws IllegalArgumentException when {@code byteSize} is negative
     */
    public static Storage allocateUninitialized(long byteSize) {
        return allocate(byteSize, false);
    }

    private static Storage allocate(long byteSize, boolean zeroed) {
        if (byteSize < 0) {
            throw new IllegalArgumentException("storage size must be >= 0 bytes, got " + byteSize);
        }
        Storage st = new Storage(CachingHostAllocator.get().hand(byteSize, zeroed), byteSize);
        if (!zeroed && CachingHostAllocator.FILL_UNINITIALIZED) {
            st.segment().fill(CachingHostAllocator.FILL_BYTE);
        }
        MemoryScope.track(st);
        return st;
    }

    /**
     * Moves this storage from scope {@code from} to {@code to} (null: none); false when {@code from} did not own it.
     */
    boolean moveScope(MemoryScope from, MemoryScope to) {
        if (!SCOPE.compareAndSet(this, from, to)) {
            return false;
        }
        if (from == null && to != null) {
            NativeMemoryPacer.scoped(blockBytes());
        } else if (from != null && to == null) {
            NativeMemoryPacer.scoped(-blockBytes());
        }
        return true;
    }

    /** Takes this storage out of any scope. */
    void leaveScope() {
        if (SCOPE.getAndSet(this, null) != null) {
            NativeMemoryPacer.scoped(-blockBytes());
        }
    }

    /** The host cache's bytes behind this storage, as {@link NativeMemoryPacer#liveBytes()} counts them. */
    private long blockBytes() {
        return handout == null ? 0 : handout.block().byteSize();
    }

    /**
     * Gives this storage's memory back to the host cache now, rather than when the garbage collector finds it
     * unreachable: for memory whose last use is known (temporaries of an operation, a scope's tensors). Every
     * later use of the storage (and of the tensors on it) fails; releasing twice, or releasing storage that the
     * cache does not own (wrapped or device memory), does nothing.
     */
    public void release() {
        if (handout != null && !released) {
            released = true;
            leaveScope();
            handout.giveBack(CachingHostAllocator.get());
        }
    }

    /** True once {@link #release()} gave the memory back. */
    public boolean isReleased() {
        return released;
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
     * @throws UnsupportedOperationException when the storage is on a device
     */
    public MemorySegment segment() {
        if (segment == null) {
            throw Dispatch.hostMemoryOf(deviceBuffer.device());
        }
        if (released) {
            throw new IllegalStateException("this tensor's storage (" + segment.byteSize() + " bytes) was released "
                    + "back to the host memory cache and may hold another tensor's data now; a tensor must not be "
                    + "used after its storage or scope was released");
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
