package io.tensorbus.backend.opencl;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;

/**
 * The {@code opencl} backend: collectives over OpenCL buffers. Its ranks connect through the tcp backend's
 * transport (found by name through the SPI, so framing, matching, timeouts and failure handling are the same
 * code), which stages device memory through the host chunk by chunk and reduces on the device with the OpenCL
 * runtime's kernels. It is available wherever an OpenCL device is.
 */
public final class OpenClBackendProvider implements BackendProvider {
    /** The backend's name. */
    public static final String NAME = "opencl";
    private static final String TRANSPORT = "tcp";

    private final OpenClRuntimeProvider runtime = new OpenClRuntimeProvider();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return runtime.isAvailable();
    }

    @Override
    public Throwable unavailabilityCause() {
        return runtime.unavailabilityCause();
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        if (!isAvailable()) {
            return Future.failedFuture(new IllegalStateException("backend 'opencl' is not available on this machine: "
                    + unavailabilityCause().getMessage(), unavailabilityCause()));
        }
        try {
            return BackendProvider.named(TRANSPORT).create(options).map(OpenClBackend::new);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }
}
