package io.tensorbus.backend.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The native host memory (page-aligned) device regions pass through on their way to and from the sockets, reused from one
 * chunk and one collective to the next: fresh memory costs a page fault per page on first touch, which for
 * 16 MiB chunks is milliseconds. Buffers come back once the copy or write that used them completed; beyond a
 * bound they are left to the garbage collector.
 */
final class StagingPool {
    /** At most this much memory is kept for reuse, in bytes. */
    private static final long MAX_BYTES = 256L << 20;

    private final Map<Long, ArrayDeque<MemorySegment>> free = new HashMap<>();
    private long pooledBytes;

    /** Native memory of {@code bytes} bytes, 64-byte aligned, with arbitrary contents. */
    synchronized MemorySegment take(long bytes) {
        ArrayDeque<MemorySegment> q = free.get(bytes);
        if (q != null && !q.isEmpty()) {
            pooledBytes -= bytes;
            return q.pop();
        }
        // Page-aligned: drivers use such host memory in place (OpenCL's USE_HOST_PTR), else they copy it.
        return Arena.ofAuto().allocate(Math.max(1, bytes), 4096).asSlice(0, bytes);
    }

    /** Takes {@code segment} back for reuse; the caller no longer touches it. */
    synchronized void give(MemorySegment segment) {
        long bytes = segment.byteSize();
        if (bytes == 0 || pooledBytes + bytes > MAX_BYTES) {
            return;
        }
        free.computeIfAbsent(bytes, b -> new ArrayDeque<>()).push(segment);
        pooledBytes += bytes;
    }
}
