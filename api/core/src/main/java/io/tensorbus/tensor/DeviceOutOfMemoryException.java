package io.tensorbus.tensor;

import io.tensorbus.Device;
import java.util.Locale;

/**
 * A device could not hold a new tensor, as PyTorch's {@code torch.cuda.OutOfMemoryError}: the message says how
 * much was asked and how the device's memory is spent, after the caching allocator already collected garbage and
 * freed its cached blocks. Free tensors, lower the batch or raise {@link DeviceMemory#setPerProcessMemoryFraction}.
 */
public final class DeviceOutOfMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Device device;
    private final long requestedBytes;

    DeviceOutOfMemoryException(Device device, long requested, long allocated, long cached, long limit, long total) {
        super(String.format(Locale.ROOT, "%s is out of memory: tried to allocate %s; %s allocated by tensors, %s "
                + "cached (already freed before this), this process's limit %s of the device's %s", device,
                mib(requested), mib(allocated), mib(cached), limit == Long.MAX_VALUE ? "none" : mib(limit),
                total == Long.MAX_VALUE ? "unknown" : mib(total)));
        this.device = device;
        this.requestedBytes = requested;
    }

    /** The device that refused. */
    public Device device() {
        return device;
    }

    /** The bytes asked for (the size class of the tensor's bytes). */
    public long requestedBytes() {
        return requestedBytes;
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.2f MiB", bytes / 1048576.0);
    }
}
