package io.tensorbus.tensor;

import io.tensorbus.Device;
import java.util.Objects;

/**
 * The memory behind device tensors: statistics and control of the caching allocator, as PyTorch's
 * {@code torch.cuda.memory_stats()}, {@code empty_cache()}, {@code reset_peak_memory_stats()} and
 * {@code set_per_process_memory_fraction()}. Bytes are counted in the allocator's size classes.
 */
public final class DeviceMemory {
    private DeviceMemory() {
    }

    /**
     * A snapshot of {@code device}'s counters.
     *
     * @throws IllegalArgumentException for the CPU (see {@link HostMemory}) or a device no runtime here has
     */
    public static MemoryStats stats(Device device) {
        return pool(device).stats();
    }

    /** Frees every cached block of every device (live tensors are untouched). */
    public static void emptyCache() {
        CachingDeviceAllocator.get().pools().forEach(CachingDeviceAllocator.Pool::emptyCache);
    }

    /** Starts {@link MemoryStats#peakAllocatedBytes()} of {@code device} again from the bytes allocated now. */
    public static void resetPeakStats(Device device) {
        pool(device).resetPeak();
    }

    /**
     * Caps this process's tensors on {@code device}, live and cached, at {@code fraction} of its memory; past it an
     * allocation fails with a {@link DeviceOutOfMemoryException}.
     *
     * @throws IllegalArgumentException for a fraction outside {@code (0, 1]}
     */
    public static void setPerProcessMemoryFraction(double fraction, Device device) {
        if (!(fraction > 0 && fraction <= 1)) {
            throw new IllegalArgumentException("a memory fraction is in (0, 1], got " + fraction);
        }
        pool(device).setFraction(fraction);
    }

    private static CachingDeviceAllocator.Pool pool(Device device) {
        Objects.requireNonNull(device, "device");
        if (device.isCpu()) {
            throw new IllegalArgumentException("the CPU's memory is HostMemory's; DeviceMemory covers devices such as "
                    + "opencl:0 or cuda:0");
        }
        return CachingDeviceAllocator.get().pool(device);
    }
}
