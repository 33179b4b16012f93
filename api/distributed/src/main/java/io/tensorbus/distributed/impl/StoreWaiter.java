package io.tensorbus.distributed.impl;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One caller waiting in a {@link StoreState} for a list of keys. Its fields are guarded by the state's lock; the
 * callback runs outside it, exactly once, unless the waiter is cancelled first.
 */
public final class StoreWaiter {

    final List<String> keys;
    /** Keys not yet set, in the order asked; guarded by the owning state's lock. */
    final Set<String> missing = new LinkedHashSet<>();
    final Consumer<List<byte[]>> onReady;
    /** True once fired or cancelled; guarded by the owning state's lock. */
    boolean done;
    /** The values of {@link #keys} when all were set; written under the lock, read by the firing thread. */
    List<byte[]> values;

    StoreWaiter(List<String> keys, Consumer<List<byte[]>> onReady) {
        this.keys = keys;
        this.onReady = onReady;
    }

    /** The keys this waiter waits for, in the order asked. */
    public List<String> keys() {
        return keys;
    }

    void fire() {
        onReady.accept(values);
    }

    List<String> missingSnapshot() {
        return new ArrayList<>(missing);
    }
}
