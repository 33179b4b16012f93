package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreMemory;
import io.tensorbus.distributed.impl.StoreState;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A {@link Store} held in this JVM's memory, as PyTorch's {@code HashStore}: for ranks that run as threads of one
 * process (tests, single-machine experiments). Thread-safe; futures are already complete when nothing has to be
 * waited for, and otherwise complete on the thread that sets the awaited key, or on a shared timer thread when
 * they time out with {@link java.util.concurrent.TimeoutException} naming the keys not set. No {@code Vertx} is
 * needed.
 */
public final class HashStore implements Store {

    /** The timeout of {@link #HashStore()}: 30 minutes, as PyTorch's {@code default_pg_timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private final StoreMemory memory;

    /** An empty store whose waits time out after {@link #DEFAULT_TIMEOUT}. */
    public HashStore() {
        this(DEFAULT_TIMEOUT);
    }

    /**
     * An empty store whose {@link #get}, {@link #multiGet} and {@link #wait(List)} time out after {@code timeout}.
     *
     * @throws NullPointerException when {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    public HashStore(Duration timeout) {
        this.memory = new StoreMemory(new StoreState(), timeout, "HashStore");
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        return memory.set(key, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        return memory.get(key);
    }

    /**
     * {@inheritDoc} The future fails with {@link IllegalStateException} when the key holds something else than a
     * decimal counter, and with {@link ArithmeticException} when the sum overflows.
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Long> add(String key, long delta) {
        return memory.add(key, delta);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return memory.compareSet(key, expected, desired);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys}, one of them or {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        return memory.wait(keys, timeout);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        return memory.deleteKey(key);
    }

    /** {@inheritDoc} */
    @Override
    public Future<Long> numKeys() {
        return memory.numKeys();
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        return memory.check(keys);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        return memory.append(key, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        return memory.multiGet(keys);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        return memory.multiSet(entries);
    }

    /** {@inheritDoc} */
    @Override
    public Duration timeout() {
        return memory.timeout();
    }

    /**
     * Fails the calls still waiting with {@link IllegalStateException} and every later call likewise; the data is
     * dropped with the object. Idempotent.
     */
    @Override
    public void close() {
        memory.close();
    }
}
