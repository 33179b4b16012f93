package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreChecks;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A view of another {@link Store} in which every key {@code k} is {@code prefix + "/" + k}, as PyTorch's
 * {@code PrefixStore}: process groups and jobs sharing one store use distinct prefixes so that their keys never
 * collide. Prefix stores nest ({@code new PrefixStore("b", new PrefixStore("a", base))} uses {@code "a/b/k"}).
 *
 * <p>Two things are not scoped by the prefix, as in PyTorch: {@link #numKeys()} counts every key of the base
 * store, and {@link #close()} leaves the base store open (the base is shared; its owner closes it). Timeout
 * messages name the prefixed keys, which is what the base store was waiting for.
 */
public final class PrefixStore implements Store {

    private final String prefix;
    private final Store base;

    /**
     * A view of {@code base} whose keys start with {@code prefix + "/"}.
     *
     * @param prefix any string, also empty (keys then start with {@code "/"})
     * @param base the store that holds the data; not closed by {@link #close()}
     * @throws NullPointerException when an argument is null
     */
    public PrefixStore(String prefix, Store base) {
        this.prefix = Objects.requireNonNull(prefix, "prefix must not be null");
        this.base = Objects.requireNonNull(base, "base store must not be null");
    }

    /** The prefix, without the {@code "/"} that joins it to keys. */
    public String prefix() {
        return prefix;
    }

    /** The store that holds the data (PyTorch's {@code underlying_store}). */
    public Store base() {
        return base;
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        return base.set(scoped(key), value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        return base.get(scoped(key));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Long> add(String key, long delta) {
        return base.add(scoped(key), delta);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return base.compareSet(scoped(key), expected, desired);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys}, one of them or {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        return base.wait(scoped(keys), StoreChecks.timeout(timeout));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        return base.deleteKey(scoped(key));
    }

    /** The number of keys of the whole base store, inside this prefix or not (as PyTorch). */
    @Override
    public Future<Long> numKeys() {
        return base.numKeys();
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        return base.check(scoped(keys));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        return base.append(scoped(key), value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        return base.multiGet(scoped(keys));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> scoped = new LinkedHashMap<>();
        StoreChecks.entries(entries).forEach((key, value) -> scoped.put(scoped(key), value));
        return base.multiSet(scoped);
    }

    /** The base store's timeout. */
    @Override
    public Duration timeout() {
        return base.timeout();
    }

    /** Sets the base store's timeout, as PyTorch's {@code PrefixStore} does. */
    @Override
    public void setTimeout(Duration timeout) {
        base.setTimeout(timeout);
    }

    /** Does nothing: the base store is shared and stays open (as PyTorch). Close the base through its owner. */
    @Override
    public void close() {
        // Deliberately empty: other prefix views and the base's owner still use the base.
    }

    private String scoped(String key) {
        return prefix + "/" + StoreChecks.key(key);
    }

    private List<String> scoped(List<String> keys) {
        List<String> scoped = new ArrayList<>();
        for (String key : StoreChecks.keys(keys)) {
            scoped.add(prefix + "/" + key);
        }
        return scoped;
    }
}
