package io.tensorbus.optim.archfixture;

import io.tensorbus.data.archfixture.CycleEnd;

/** Half of a cycle between {@code optim} and {@code data}: {@code NO_PACKAGE_CYCLES} must report it. */
public final class CycleStart {
    private CycleStart() {
    }

    /** Leads into {@code data}. */
    public static int next() {
        return CycleEnd.back() + 1;
    }

    /** Called back from {@code data}. */
    public static int value() {
        return 1;
    }
}
