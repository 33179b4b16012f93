package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceInfo;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The caching allocator of device memory, as PyTorch's CUDA caching allocator: device storage is a view of a block
 * of a size class (a multiple of 512 bytes up to 1 MiB, of 2 MiB beyond), and a block whose storage died goes back
 * to its device's pool for the next tensor of its class instead of back to the runtime. A reused block is zeroed
 * in the device's queue order, as fresh memory is. When a device's limit ({@link DeviceMemory}) or the device
 * itself refuses an allocation, the pool first collects garbage and frees its cached blocks, then fails with a
 * {@link DeviceOutOfMemoryException} saying how much was asked, allocated, cached and allowed.
 */
final class CachingDeviceAllocator {
    private static final long SMALL = 1L << 20;
    private static final long SMALL_STEP = 512;
    private static final long LARGE_STEP = 2L << 20;
    private static final CachingDeviceAllocator INSTANCE = new CachingDeviceAllocator();

    private final Map<Device, Pool> pools = new ConcurrentHashMap<>();

    static CachingDeviceAllocator get() {
        return INSTANCE;
    }

    /** A zero-filled contiguous tensor on {@code device}, from the cache when a block of its class is free. */
    Tensor allocate(Device device, DType dtype, int[] shape) {
        DeviceRuntime runtime = DeviceRuntimeProvider.of(device);
        long bytes = (long) Math.max(0, Shapes.numel(shape)) * dtype.byteSize();
        Pool pool = pool(device, runtime);
        DeviceBuffer block = pool.take(classOf(bytes));
        DeviceBuffer view = runtime.view(block, 0, dtype, DeviceRuntimeKernels.longs(shape));
        Storage storage = Storage.onDevicePooled(view, () -> pool.giveBack(block));
        return new Tensor(storage, dtype, shape.clone(), Shapes.contiguousStrides(shape), 0, null);
    }

    Pool pool(Device device) {
        return pool(device, DeviceRuntimeProvider.of(device));
    }

    private Pool pool(Device device, DeviceRuntime runtime) {
        return pools.computeIfAbsent(device, d -> new Pool(d, runtime));
    }

    Iterable<Pool> pools() {
        return pools.values();
    }

    /** The block size serving {@code bytes}: at least one class step, so that empty tensors have memory too. */
    static long classOf(long bytes) {
        long step = bytes <= SMALL ? SMALL_STEP : LARGE_STEP;
        return Math.max(step, (bytes + step - 1) / step * step);
    }

    /** One device's blocks: free ones by size class, and the counters of {@link MemoryStats}. */
    static final class Pool {
        private final Device device;
        private final DeviceRuntime runtime;
        private final Map<Long, ArrayDeque<DeviceBuffer>> free = new HashMap<>();
        private long allocated;
        private long peak;
        private long cached;
        private long allocations;
        private long hits;
        private long frees;
        private long evicted;
        private long limit = Long.MAX_VALUE;

        Pool(Device device, DeviceRuntime runtime) {
            this.device = device;
            this.runtime = runtime;
        }

        /** A zeroed block of {@code size} bytes. */
        DeviceBuffer take(long size) {
            DeviceBuffer reused = reuse(size);
            if (reused != null) {
                DeviceRuntimeKernels.await(runtime.fill(reused, 0), "allocate", device);
                return reused;
            }
            DeviceBuffer fresh = fresh(size);
            if (fresh == null) {
                // Storage the program dropped may still wait for its cleaner: collect, give the cache back, retry.
                System.gc();
                sleep();
                emptyCache();
                fresh = fresh(size);
            }
            if (fresh == null) {
                throw outOfMemory(size);
            }
            return fresh;
        }

        private synchronized DeviceBuffer reuse(long size) {
            ArrayDeque<DeviceBuffer> q = free.get(size);
            if (q == null || q.isEmpty()) {
                return null;
            }
            cached -= size;
            allocations++;
            hits++;
            count(size);
            return q.pop();
        }

        /** A new block, or null when the limit or the device refuses it. */
        private DeviceBuffer fresh(long size) {
            synchronized (this) {
                if (allocated + cached + size > limit) {
                    return null;
                }
            }
            DeviceBuffer b;
            try {
                b = runtime.allocate(device, DType.BOOL, size);
            } catch (IllegalArgumentException e) {
                throw e; // a request no device of this kind can hold: no collection helps
            } catch (RuntimeException e) {
                return null;
            }
            synchronized (this) {
                allocations++;
                count(size);
            }
            return b;
        }

        private void count(long size) {
            allocated += size;
            peak = Math.max(peak, allocated);
        }

        /** Called by a storage's cleaner (or release) once no tensor refers to the block. */
        synchronized void giveBack(DeviceBuffer block) {
            long size = block.byteSize();
            allocated -= size;
            frees++;
            cached += size;
            free.computeIfAbsent(size, s -> new ArrayDeque<>()).push(block);
        }

        /** Frees every cached block through the runtime. */
        void emptyCache() {
            ArrayDeque<DeviceBuffer> drop = new ArrayDeque<>();
            synchronized (this) {
                free.values().forEach(drop::addAll);
                free.clear();
                evicted += cached;
                cached = 0;
            }
            drop.forEach(runtime::release);
        }

        synchronized MemoryStats stats() {
            return new MemoryStats(true, allocated, peak, cached, limit, limit, allocations, hits, frees, evicted);
        }

        synchronized void resetPeak() {
            peak = allocated;
        }

        /** Caps live and cached bytes at {@code fraction} of the device's memory. */
        synchronized void setFraction(double fraction) {
            long total = memoryBytes();
            limit = fraction >= 1 ? Long.MAX_VALUE : (long) (fraction * total);
        }

        private long memoryBytes() {
            for (DeviceInfo info : runtime.devices()) {
                if (info.device().equals(device)) {
                    return info.memoryBytes();
                }
            }
            return Long.MAX_VALUE;
        }

        private DeviceOutOfMemoryException outOfMemory(long size) {
            synchronized (this) {
                return new DeviceOutOfMemoryException(device, size, allocated, cached, limit, memoryBytes());
            }
        }

        private static void sleep() {
            try {
                Thread.sleep(50); // the cleaner's thread gives dropped blocks back meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public String toString() {
            return device + " pool " + Arrays.toString(new long[] {allocated, cached});
        }
    }
}
