package io.tensorbus.spi;

import io.tensorbus.Device;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The runtimes {@link DeviceRuntimeProvider#of} found, by device type: a {@link java.util.ServiceLoader} scan
 * reads every jar's service files, too slow for each chunk of a collective and each tensor operation. Only
 * available runtimes are kept, so a missing or unavailable one is looked for (and explained) again.
 */
final class DeviceRuntimes {
    private static final Map<String, DeviceRuntime> FOUND = new ConcurrentHashMap<>();

    private DeviceRuntimes() {
    }

    static DeviceRuntime of(Device device) {
        if (device.isCpu()) {
            throw new IllegalArgumentException("the cpu has no device runtime: host memory is used directly");
        }
        DeviceRuntime known = FOUND.get(device.type());
        if (known != null) {
            return known;
        }
        List<String> types = new ArrayList<>();
        for (DeviceRuntimeProvider p : DeviceRuntimeProvider.all()) {
            if (p.type().equals(device.type())) {
                DeviceRuntime runtime = p.runtime();
                FOUND.putIfAbsent(device.type(), runtime);
                return runtime;
            }
            types.add(p.type());
        }
        throw new IllegalArgumentException("no device runtime for " + device + "; found " + types
                + " (a runtime is a jar with META-INF/services/" + DeviceRuntimeProvider.class.getName()
                + ", such as tensorbus-backend-opencl)");
    }
}
