package io.tensorbus.backend.opencl;

import org.junit.jupiter.api.Assumptions;

/** Skips a test class on a machine without an OpenCL device, saying why (the skip reason shows in the report). */
final class OpenClAvailable {
    private OpenClAvailable() {
    }

    static void assume(String suite) {
        OpenClRuntimeProvider p = new OpenClRuntimeProvider();
        if (!p.isAvailable()) {
            String why = suite + " skipped: " + p.unavailabilityCause().getMessage();
            System.err.println("[tensorbus] " + why);
            Assumptions.abort(why);
        }
    }
}
