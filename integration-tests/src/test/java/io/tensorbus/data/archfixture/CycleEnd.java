package io.tensorbus.data.archfixture;

import io.tensorbus.optim.archfixture.CycleStart;

/** The other half of the {@code optim} / {@code data} cycle of {@code CycleStart}. */
public final class CycleEnd {
    private CycleEnd() {
    }

    /** Leads back into {@code optim}. */
    public static int back() {
        return CycleStart.value();
    }
}
