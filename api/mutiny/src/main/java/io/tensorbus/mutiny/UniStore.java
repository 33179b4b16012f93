package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.c10d.Store;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Mutiny's view of a {@link Store} (c10d's key-value store: {@code TcpStore}, {@code FileStore}, {@code HashStore}
 * and their prefix views): the same calls as lazy {@link Uni}s, which issue the call when subscribed, once per
 * subscription. Cancelling a subscription drops its result; the store's own timeout still ends the call.
 */
public final class UniStore {
    private final Store store;

    /**
     * Wraps {@code store}.
     *
     * @throws NullPointerException when {@code store} is null
     */
    public UniStore(Store store) {
        if (store == null) {
            throw new NullPointerException("store");
        }
        this.store = store;
    }

    /** The wrapped store. */
    public Store store() {
        return store;
    }

    /** {@link Store#set(String, byte[])}. */
    public Uni<Void> set(String key, byte[] value) {
        return UniProcessGroup.uni(() -> store.set(key, value));
    }

    /** {@link Store#get(String)}: fails with the store's timeout when no rank sets {@code key} in time. */
    public Uni<byte[]> get(String key) {
        return UniProcessGroup.uni(() -> store.get(key));
    }

    /** {@link Store#add(String, long)}. */
    public Uni<Long> add(String key, long delta) {
        return UniProcessGroup.uni(() -> store.add(key, delta));
    }

    /** {@link Store#compareSet(String, byte[], byte[])}. */
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return UniProcessGroup.uni(() -> store.compareSet(key, expected, desired));
    }

    /** {@link Store#wait(List, Duration)}. */
    public Uni<Void> wait(List<String> keys, Duration timeout) {
        return UniProcessGroup.uni(() -> store.wait(keys, timeout));
    }

    /** {@link Store#wait(List)}, with the store's own timeout. */
    public Uni<Void> wait(List<String> keys) {
        return UniProcessGroup.uni(() -> store.wait(keys));
    }

    /** {@link Store#deleteKey(String)}. */
    public Uni<Boolean> deleteKey(String key) {
        return UniProcessGroup.uni(() -> store.deleteKey(key));
    }

    /** {@link Store#numKeys()}. */
    public Uni<Long> numKeys() {
        return UniProcessGroup.uni(store::numKeys);
    }

    /** {@link Store#check(List)}. */
    public Uni<Boolean> check(List<String> keys) {
        return UniProcessGroup.uni(() -> store.check(keys));
    }

    /** {@link Store#append(String, byte[])}. */
    public Uni<Void> append(String key, byte[] value) {
        return UniProcessGroup.uni(() -> store.append(key, value));
    }

    /** {@link Store#multiGet(List)}. */
    public Uni<List<byte[]>> multiGet(List<String> keys) {
        return UniProcessGroup.uni(() -> store.multiGet(keys));
    }

    /** {@link Store#multiSet(Map)}. */
    public Uni<Void> multiSet(Map<String, byte[]> entries) {
        return UniProcessGroup.uni(() -> store.multiSet(entries));
    }
}
