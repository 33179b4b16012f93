package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.spi.DeviceBuffer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A CUDA stream double: events finish when the test says so ({@link #finishAll}) or at once ({@link #autoFinish}),
 * and buffers are {@link Buffer}s with made-up device addresses.
 */
final class FakeStream implements CudaStream {
    private final AtomicLong events = new AtomicLong(1);
    private final Map<Long, Boolean> done = new ConcurrentHashMap<>();
    final AtomicLong released = new AtomicLong();
    /** The threads that made the stream's device current. */
    final Set<String> currentOn = ConcurrentHashMap.newKeySet();
    volatile boolean autoFinish;

    /** A CUDA buffer double at {@code address}. */
    record Buffer(long address, DType dtype, long[] shapeArray) implements DeviceBuffer {
        @Override
        public Device device() {
            return Device.cuda(0);
        }

        @Override
        public long[] shape() {
            return shapeArray.clone();
        }

        @Override
        public long numel() {
            return Arrays.stream(shapeArray).reduce(1, (a, b) -> a * b);
        }

        @Override
        public MemorySegment segment() {
            throw new UnsupportedOperationException("device memory");
        }

        @Override
        public String toString() {
            return dtype + Arrays.toString(shapeArray);
        }
    }

    static Buffer buffer(long address, DType dtype, long n) {
        return new Buffer(address, dtype, new long[] {n});
    }

    @Override
    public void makeCurrent() {
        currentOn.add(Thread.currentThread().getName());
    }

    @Override
    public long handle() {
        return 0xabc;
    }

    @Override
    public long recordEvent() {
        long e = events.getAndIncrement();
        done.put(e, autoFinish);
        return e;
    }

    @Override
    public boolean isDone(long event) {
        return done.getOrDefault(event, false);
    }

    @Override
    public void releaseEvent(long event) {
        done.remove(event);
        released.incrementAndGet();
    }

    void finishAll() {
        done.replaceAll((k, v) -> true);
    }

    @Override
    public long address(DeviceBuffer buffer) {
        if (buffer instanceof Buffer b) {
            return b.address();
        }
        throw new IllegalArgumentException(buffer + " is not CUDA memory (it is on " + buffer.device() + ")");
    }
}
