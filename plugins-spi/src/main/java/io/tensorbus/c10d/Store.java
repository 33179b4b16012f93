package io.tensorbus.c10d;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The rendezvous key-value store that processes of a job share, as c10d's {@code Store}: backends publish
 * their addresses in it and wait for each other's. Keys are strings, values are bytes. Every method returns
 * at once; a method that waits for keys fails with {@link java.util.concurrent.TimeoutException} after
 * {@link #timeout()} (or the timeout it is given), so nothing waits forever.
 *
 * <p>Implementations: {@code TcpStore}, {@code FileStore}, {@code HashStore} and {@code PrefixStore} in the api.
 */
public interface Store extends AutoCloseable {

    /** Sets {@code key} to {@code value}, replacing any value, and wakes the callers waiting for it. */
    Future<Void> set(String key, byte[] value);

    /** The value of {@code key}, waiting up to {@link #timeout()} for some rank to set it. */
    Future<byte[]> get(String key);

    /**
     * Adds {@code delta} to the counter at {@code key} (absent counts as 0) and returns the new value. The
     * counter is stored as its decimal text, as PyTorch does, so {@link #get} of it reads e.g. {@code "3"}.
     */
    Future<Long> add(String key, long delta);

    /**
     * Sets {@code key} to {@code desired} when its current value equals {@code expected} (an absent key matches
     * an empty {@code expected}) and returns the value the key holds afterwards; when the key is absent and
     * {@code expected} is not empty, returns {@code expected} and changes nothing (PyTorch's semantics).
     */
    Future<byte[]> compareSet(String key, byte[] expected, byte[] desired);

    /** Completes once every key in {@code keys} is set; fails with a timeout naming the missing keys. */
    Future<Void> wait(List<String> keys, Duration timeout);

    /** {@link #wait(List, Duration)} with {@link #timeout()}. */
    default Future<Void> wait(List<String> keys) {
        return wait(keys, timeout());
    }

    /** Deletes {@code key}; true when it existed. */
    Future<Boolean> deleteKey(String key);

    /** The number of keys set in this store (all of them, also those outside a prefix view). */
    Future<Long> numKeys();

    /** True when every key in {@code keys} is set right now; never waits. */
    Future<Boolean> check(List<String> keys);

    /** Appends {@code value} to the bytes of {@code key} (creating it when absent). */
    Future<Void> append(String key, byte[] value);

    /** The values of all {@code keys}, in order, waiting up to {@link #timeout()} for each to be set. */
    Future<List<byte[]>> multiGet(List<String> keys);

    /** Sets every entry of {@code entries} in one step (in the map's iteration order). */
    Future<Void> multiSet(Map<String, byte[]> entries);

    /** How long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait before failing. */
    Duration timeout();

    /** Releases the connection or file; the server side of a TCP store stops serving. */
    @Override
    void close();
}
