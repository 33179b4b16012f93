package io.tensorbus.backend.nccl;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import jcuda.Pointer;

import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;

/**
 * Page-locked host memory that copies between the host and a device go through: the driver copies pinned memory
 * asynchronously, while a copy from pageable memory would block the calling thread. Buffers come in power-of-two
 * sizes up to {@link #CHUNK}; a longer copy goes through one buffer chunk by chunk. Returned buffers are kept for
 * the next copy, up to {@link #MAX_KEPT_BYTES} in all.
 */
final class PinnedStaging {
    /** The largest staging buffer, in bytes: copies are cut into chunks of this size. */
    static final long CHUNK = 16L << 20;
    /** At most this many bytes of pinned memory are kept between copies. */
    static final long MAX_KEPT_BYTES = 256L << 20;
    private static final long SMALLEST = 64L << 10;

    /**
     * One pinned buffer.
     *
     * @param pointer the host pointer JCuda's copies take
     * @param segment the same bytes, for the host side
     */
    record Buffer(Pointer pointer, MemorySegment segment) {
    }

    private final Runnable makeCurrent;
    private final Map<Long, ArrayDeque<Buffer>> kept = new HashMap<>();
    private long keptBytes;

    /** @param makeCurrent makes the device's context current before memory is pinned or freed */
    PinnedStaging(Runnable makeCurrent) {
        this.makeCurrent = makeCurrent;
    }

    /** A buffer of at least {@code min(bytes, CHUNK)} bytes. */
    synchronized Buffer take(long bytes) {
        long size = sizeClass(bytes);
        ArrayDeque<Buffer> free = kept.get(size);
        if (free != null && !free.isEmpty()) {
            keptBytes -= size;
            return free.pop();
        }
        makeCurrent.run();
        Pointer p = new Pointer();
        CudaDevice.check(cuMemAllocHost(p, size), "pinning " + size + " bytes of host memory");
        return new Buffer(p, MemorySegment.ofBuffer(p.getByteBuffer(0, size).order(ByteOrder.nativeOrder())));
    }

    /** Returns a buffer for reuse, or frees it when enough are kept. */
    synchronized void give(Buffer b) {
        long size = b.segment().byteSize();
        if (keptBytes + size > MAX_KEPT_BYTES) {
            makeCurrent.run();
            cuMemFreeHost(b.pointer());
            return;
        }
        kept.computeIfAbsent(size, s -> new ArrayDeque<>()).push(b);
        keptBytes += size;
    }

    private static long sizeClass(long bytes) {
        long want = Math.min(Math.max(bytes, SMALLEST), CHUNK);
        return Long.highestOneBit(want - 1) << 1;
    }
}
