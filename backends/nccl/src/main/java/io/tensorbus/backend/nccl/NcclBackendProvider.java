package io.tensorbus.backend.nccl;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.vertx.core.Future;

/**
 * The {@code nccl} backend: collectives over CUDA memory through NCCL, bound with the FFM API. Discovery loads
 * nothing; {@link #isAvailable()} looks for {@code libnccl.so.2} ({@link NcclLibraryPath}) and loads it once, and
 * needs a CUDA device runtime with a device. Without both it says which is missing.
 */
public final class NcclBackendProvider implements BackendProvider {
    /** The backend's name. */
    public static final String NAME = "nccl";

    /** The library of this JVM, or why there is none; looked for on first use. */
    private static final class Loaded {
        static final NcclLibrary LIBRARY;
        static final Throwable CAUSE;

        static {
            NcclLibrary library = null;
            Throwable cause = null;
            NcclLibraryPath.Result found = NcclLibraryPath.find();
            if (found.path().isEmpty()) {
                cause = new IllegalStateException(NcclLibraryPath.FILE + " not found (searched " + found.searched()
                        + "; set -D" + NcclLibraryPath.PROPERTY + " or " + NcclLibraryPath.ENV + " to the file, or "
                        + "pip install nvidia-nccl-cu12)");
            } else {
                try {
                    library = new NcclLibrary(found.path().get());
                } catch (RuntimeException e) {
                    cause = new IllegalStateException("loading " + found.path().get() + " failed: " + e.getMessage(), e);
                }
            }
            LIBRARY = library;
            CAUSE = cause;
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /**
     * Why the backend cannot run here: the NCCL library is missing, or no CUDA device runtime is; null when it
     * can.
     */
    @Override
    public Throwable unavailabilityCause() {
        DeviceRuntimeProvider cuda = DeviceRuntimeProvider.all().stream().filter(p -> p.type().equals("cuda"))
                .findFirst().orElse(null);
        if (cuda == null) {
            return new IllegalStateException("no CUDA device runtime on the class path: tensorbus has none yet, so the "
                    + "nccl backend cannot hold CUDA memory" + (Loaded.CAUSE == null ? "" : "; and "
                    + Loaded.CAUSE.getMessage()));
        }
        if (!cuda.isAvailable()) {
            return cuda.unavailabilityCause();
        }
        return Loaded.CAUSE;
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        Throwable cause = unavailabilityCause();
        return Future.failedFuture(new IllegalStateException("backend 'nccl' is not available on this machine: "
                + (cause == null ? "no CUDA stream source" : cause.getMessage()), cause));
    }
}
