package io.tensorbus.backend.nccl;

import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.OpenedRuntime;

/**
 * Finds the CUDA runtime for {@code ServiceLoader}. Constructing it loads nothing; the first call of
 * {@link #isAvailable()} looks for the NVIDIA driver's {@code libcuda.so.1} ({@link LibraryPath#DRIVER}) and,
 * only when it is there, loads JCuda, initialises the driver and counts the devices, once per JVM. NVRTC, which
 * compiles the kernels, loads when a device first runs one.
 */
public final class CudaRuntimeProvider implements DeviceRuntimeProvider {
    /** The device type: {@code cuda:N}. */
    public static final String TYPE = "cuda";

    /** The runtime of this JVM, or why there is none; opened on first use. */
    private static final OpenedRuntime<CudaRuntime> OPENED = new OpenedRuntime<>(CudaRuntimeProvider::open);

    private static CudaRuntime open() {
        LibraryPath.Result driver = LibraryPath.DRIVER.find();
        if (driver.path().isEmpty()) {
            throw new IllegalStateException("no CUDA driver here: " + LibraryPath.DRIVER.missing(driver));
        }
        CudaRuntime runtime;
        try {
            // Loaded by path first, so that JCuda's native part finds it wherever it was found.
            System.load(driver.path().get().toAbsolutePath().toString());
            runtime = new CudaRuntime();
            if (runtime.devices().isEmpty()) {
                runtime = null;
            }
        } catch (Throwable t) {
            throw new IllegalStateException("CUDA cannot be used here (driver " + driver.path().get() + "): " + t, t);
        }
        if (runtime == null) {
            throw new IllegalStateException("the CUDA driver (" + driver.path().get() + ") lists no device");
        }
        return runtime;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public boolean isAvailable() {
        return OPENED.isAvailable();
    }

    @Override
    public Throwable unavailabilityCause() {
        return OPENED.cause();
    }

    @Override
    public DeviceRuntime runtime() {
        return get();
    }

    /**
     * The CUDA runtime of this JVM, for code that wraps its own device pointers.
     *
     * @throws IllegalStateException when CUDA is not available here (the cause says why)
     */
    public static CudaRuntime get() {
        return OPENED.get();
    }
}
