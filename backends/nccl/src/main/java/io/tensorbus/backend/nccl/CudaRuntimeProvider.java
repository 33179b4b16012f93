package io.tensorbus.backend.nccl;

import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;

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
    private static final class Opened {
        static final CudaRuntime RUNTIME;
        static final Throwable CAUSE;

        static {
            CudaRuntime runtime = null;
            Throwable cause = null;
            LibraryPath.Result driver = LibraryPath.DRIVER.find();
            if (driver.path().isEmpty()) {
                cause = new IllegalStateException("no CUDA driver here: " + LibraryPath.DRIVER.missing(driver));
            } else {
                try {
                    // Loaded by path first, so that JCuda's native part finds it wherever it was found.
                    System.load(driver.path().get().toAbsolutePath().toString());
                    runtime = new CudaRuntime();
                    if (runtime.devices().isEmpty()) {
                        cause = new IllegalStateException("the CUDA driver (" + driver.path().get() + ") lists no device");
                        runtime = null;
                    }
                } catch (Throwable t) {
                    cause = new IllegalStateException("CUDA cannot be used here (driver " + driver.path().get() + "): "
                            + t, t);
                }
            }
            RUNTIME = runtime;
            CAUSE = cause;
        }
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public boolean isAvailable() {
        return Opened.RUNTIME != null;
    }

    @Override
    public Throwable unavailabilityCause() {
        return Opened.CAUSE;
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
        if (Opened.RUNTIME == null) {
            throw new IllegalStateException(Opened.CAUSE.getMessage(), Opened.CAUSE);
        }
        return Opened.RUNTIME;
    }
}
