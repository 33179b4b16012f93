package io.tensorbus.backend.opencl;

import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;

/**
 * Finds the OpenCL runtime for {@code ServiceLoader}. Constructing it loads nothing; the first call of
 * {@link #isAvailable()} or {@link #runtime()} loads JOCL and the system's OpenCL loader ({@code libOpenCL.so},
 * Debian's {@code ocl-icd-opencl-dev}) and lists the platforms, once per JVM.
 */
public final class OpenClRuntimeProvider implements DeviceRuntimeProvider {
    /** The device type: {@code opencl:N}. */
    public static final String TYPE = "opencl";

    /** The runtime of this JVM, or why there is none; opened on first use. */
    private static final class Opened {
        static final OpenClRuntime RUNTIME;
        static final Throwable CAUSE;

        static {
            OpenClRuntime runtime = null;
            Throwable cause = null;
            try {
                runtime = new OpenClRuntime();
                if (runtime.devices().isEmpty()) {
                    cause = new IllegalStateException("the OpenCL loader found no device on any platform (install "
                            + "a driver: a GPU vendor's ICD, or pocl-opencl-icd for the CPU)");
                    runtime.close();
                    runtime = null;
                }
            } catch (Throwable t) {
                cause = new IllegalStateException("OpenCL cannot be loaded here: " + t
                        + " (JOCL needs libOpenCL.so: Debian's ocl-icd-opencl-dev, and an ICD such as pocl-opencl-icd)",
                        t);
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
     * The OpenCL runtime of this JVM, for code that wraps its own {@code cl_mem}s.
     *
     * @throws IllegalStateException when OpenCL is not available here (the cause says why)
     */
    public static OpenClRuntime get() {
        if (Opened.RUNTIME == null) {
            throw new IllegalStateException(Opened.CAUSE.getMessage(), Opened.CAUSE);
        }
        return Opened.RUNTIME;
    }
}
