package io.tensorbus.backend.nccl;

import io.tensorbus.spi.BackendProvider;
import org.junit.jupiter.api.Assumptions;

/** Skips a test class on a machine without CUDA (or NCCL), saying why: the skip reason shows in the report. */
final class CudaAvailable {
    private CudaAvailable() {
    }

    static void assume(String suite) {
        CudaRuntimeProvider p = new CudaRuntimeProvider();
        if (!p.isAvailable()) {
            skip(suite, p.unavailabilityCause());
        }
    }

    /** Skips unless the nccl backend runs here with at least {@code devices} CUDA devices (one per rank). */
    static void assumeNccl(String suite, int devices) {
        BackendProvider nccl = new NcclBackendProvider();
        if (!nccl.isAvailable()) {
            skip(suite, nccl.unavailabilityCause());
        }
        int found = CudaRuntimeProvider.get().devices().size();
        if (found < devices) {
            skip(suite, new IllegalStateException("it runs " + devices + " ranks, NCCL needs a device per rank, and "
                    + "this machine has " + found));
        }
    }

    private static void skip(String suite, Throwable why) {
        String message = suite + " skipped: " + why.getMessage();
        System.err.println("[tensorbus] " + message);
        Assumptions.abort(message);
    }
}
