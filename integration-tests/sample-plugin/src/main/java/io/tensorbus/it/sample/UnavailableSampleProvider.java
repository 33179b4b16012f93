package io.tensorbus.it.sample;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;

/**
 * A sample plugin that cannot run here, {@code "unavailable-sample"}: it shows what users see when a backend's
 * device is missing (as the NCCL backend on a machine without a GPU). It is listed by
 * {@code Distributed.backendNames()}, and selecting it fails with an {@link IllegalStateException} that carries
 * {@link #unavailabilityCause()}.
 */
public final class UnavailableSampleProvider implements BackendProvider {
    /** The name users would select this backend by. */
    public static final String NAME = "unavailable-sample";

    /** The reason {@link #isAvailable()} is false. */
    public static final String REASON = "needs a device this machine lacks (the sample accelerator is never present)";

    /** The no-argument constructor {@link java.util.ServiceLoader} calls. */
    public UnavailableSampleProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return false;
    }

    @Override
    public Throwable unavailabilityCause() {
        return new UnsupportedOperationException(REASON);
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        return Future.failedFuture(new IllegalStateException("backend '" + NAME + "' is not available: " + REASON,
                unavailabilityCause()));
    }
}
