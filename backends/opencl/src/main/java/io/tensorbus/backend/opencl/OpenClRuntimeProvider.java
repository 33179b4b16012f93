package io.tensorbus.backend.opencl;

import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.OpenedRuntime;

/**
 * Finds the OpenCL runtime for {@code ServiceLoader}. Constructing it loads nothing; the first call of
 * {@link #isAvailable()} or {@link #runtime()} loads JOCL and the system's OpenCL loader ({@code libOpenCL.so},
 * Debian's {@code ocl-icd-opencl-dev}) and lists the platforms, once per JVM.
 */
public final class OpenClRuntimeProvider implements DeviceRuntimeProvider {
    /** The device type: {@code opencl:N}. */
    public static final String TYPE = "opencl";

    /** The runtime of this JVM, or why there is none; opened on first use. */
    private static final OpenedRuntime<OpenClRuntime> OPENED = new OpenedRuntime<>(OpenClRuntimeProvider::open);

    private static OpenClRuntime open() {
        OpenClRuntime runtime;
        try {
            runtime = new OpenClRuntime();
            if (runtime.devices().isEmpty()) {
                runtime.close();
                runtime = null;
            }
        } catch (Throwable t) {
            throw new IllegalStateException("OpenCL cannot be loaded here: " + t
                    + " (JOCL needs libOpenCL.so: Debian's ocl-icd-opencl-dev, and an ICD such as pocl-opencl-icd)", t);
        }
        if (runtime == null) {
            throw new IllegalStateException("the OpenCL loader found no device on any platform (install a driver: a"
                    + " GPU vendor's ICD, or pocl-opencl-icd for the CPU)");
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
     * The OpenCL runtime of this JVM, for code that wraps its own {@code cl_mem}s.
     *
     * @throws IllegalStateException when OpenCL is not available here (the cause says why)
     */
    public static OpenClRuntime get() {
        return OPENED.get();
    }
}
