package io.tensorbus.spi;

import io.tensorbus.Device;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A device runtime plugin (OpenCL, CUDA, ...), found by {@link ServiceLoader}
 * ({@code META-INF/services/io.tensorbus.spi.DeviceRuntimeProvider}). As {@link BackendProvider}, discovery is
 * cheap: constructing a provider and asking {@link #isAvailable()} loads no device driver beyond a check, and
 * a provider that cannot run here says why in {@link #unavailabilityCause()}. The runtime itself opens on the
 * first call of {@link #runtime()}.
 */
public interface DeviceRuntimeProvider {

    /** The device type this runtime serves, as in {@link Device#type()}: {@code opencl}, {@code cuda}. */
    String type();

    /** True when the runtime can run here: its library loads and it has at least one device. */
    boolean isAvailable();

    /** Why {@link #isAvailable()} is false, or null when it is available. */
    Throwable unavailabilityCause();

    /**
     * The runtime, opened on first use and shared by every caller of this JVM.
     *
     * @throws IllegalStateException when the runtime is not available here (its cause attached)
     */
    DeviceRuntime runtime();

    /** Every provider on the class path, in {@link ServiceLoader} order. */
    static List<DeviceRuntimeProvider> all() {
        List<DeviceRuntimeProvider> found = new ArrayList<>();
        ServiceLoader.load(DeviceRuntimeProvider.class).forEach(found::add);
        return found;
    }

    /**
     * The runtime that serves {@code device}, found once per device type and kept (tensors and collectives ask
     * for it on every operation).
     *
     * @throws IllegalArgumentException for the CPU, or when no provider serves the device's type (the message
     *         lists the types found)
     * @throws IllegalStateException when the provider is not available on this machine (its cause attached)
     */
    static DeviceRuntime of(Device device) {
        return DeviceRuntimes.of(device);
    }
}
