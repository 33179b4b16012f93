package io.tensorbus.spi;

import io.tensorbus.Device;
import java.util.Objects;

/**
 * What a {@link DeviceRuntime} knows about one of its devices, for {@code tensorbus info} and error messages.
 *
 * @param device the device's name in tensorbus ({@code opencl:0}, {@code cuda:1})
 * @param name the vendor's name of the device
 * @param platform the platform or driver it belongs to (an OpenCL platform, the CUDA driver version)
 * @param memoryBytes the device's global memory, in bytes
 * @param details anything else worth printing (version, extensions), possibly empty
 */
public record DeviceInfo(Device device, String name, String platform, long memoryBytes, String details) {

    /** Checks that nothing is null. */
    public DeviceInfo {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(platform, "platform");
        Objects.requireNonNull(details, "details");
    }

    /** For example {@code opencl:0  pthread-haswell (Portable Computing Language, 9.8 GiB)}. */
    @Override
    public String toString() {
        return device + "  " + name + " (" + platform + ", " + String.format("%.1f GiB", memoryBytes / 1073741824.0)
                + (details.isEmpty() ? "" : ", " + details) + ")";
    }
}
