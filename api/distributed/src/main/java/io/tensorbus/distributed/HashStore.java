package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreMeters;
import io.tensorbus.distributed.impl.StoreState;
import io.tensorbus.distributed.impl.StoreTimers;
import io.tensorbus.distributed.impl.StoreWaiter;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;

/**
 * A {@link Store} held in this JVM's memory, as PyTorch's {@code HashStore}: for ranks that run as threads of one
 * process (tests, single-machine experiments). Thread-safe; futures are already complete when nothing has to be
 * waited for, and otherwise complete on the thread that sets the awaited key, or on a shared timer thread when
 * they time out with {@link TimeoutException} naming the keys not set. No {@code Vertx} is needed.
 *
 * <p>A {@link TcpStore} server's own view of the data it serves is a {@code HashStore} too (the one subclass).
 */
public sealed class HashStore implements Store permits TcpStoreHost {
    private final StoreState state;
    private volatile Duration timeout;
    private final String name;
    private final Map<StoreWaiter, Promise<?>> pending = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile boolean metered = true;

    /** An empty store whose waits time out after {@link Distributed#DEFAULT_TIMEOUT}. */
    public HashStore() {
        this(Distributed.DEFAULT_TIMEOUT);
    }

    /**
     * An empty store whose {@link #get}, {@link #multiGet} and {@link #wait(List)} time out after {@code timeout}.
     *
     * @throws NullPointerException when {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    public HashStore(Duration timeout) {
        this(new StoreState(), timeout, "HashStore");
    }

    /**
     * A view of {@code state}, which a {@code TcpStore} server also serves, or a {@code FileStore} mirrors its
     * file into.
     *
     * @param name what messages call this store, e.g. {@code "TcpStore server host:port"}
     */
    HashStore(StoreState state, Duration timeout, String name) {
        this.state = state;
        this.timeout = StoreChecks.timeout(timeout);
        this.name = name;
    }

    /** The {@code store} tag of this store's meters, or null when its requests are another store's own. */
    String kind() {
        return metered ? "hash" : null;
    }

    /** Leaves this store's requests untimed: it is the inside of another store, which times them itself. */
    HashStore unmetered() {
        metered = false;
        return this;
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return StoreMeters.timed(kind(), "set", () -> run(() -> {
            state.set(key, copy);
            return null;
        }));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed(kind(), "get", () ->
                awaitKeys(List.of(key), timeout, "get of key '" + key + "'").map(values -> values.get(0).clone()));
    }

    /**
     * {@inheritDoc} The future fails with {@link IllegalStateException} when the key holds something else than a
     * decimal counter, and with {@link ArithmeticException} when the sum overflows.
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Long> add(String key, long delta) {
        StoreChecks.key(key);
        return StoreMeters.timed(kind(), "add", () -> run(() -> state.add(key, delta)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        byte[] expectedCopy = StoreChecks.value("expected", expected).clone();
        byte[] desiredCopy = StoreChecks.value("desired", desired).clone();
        return StoreMeters.timed(kind(), "compare_set", () ->
                run(() -> state.compareSet(key, expectedCopy, desiredCopy).clone()));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys}, one of them or {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        List<String> copy = StoreChecks.keys(keys);
        StoreChecks.timeout(timeout);
        return StoreMeters.timed(kind(), "wait", () -> awaitKeys(copy, timeout, "wait for keys " + copy).mapEmpty());
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed(kind(), "delete", () -> run(() -> state.delete(key)));
    }

    @Override
    public Future<Long> numKeys() {
        return StoreMeters.timed(kind(), "num_keys", () -> run(state::size));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed(kind(), "check", () -> run(() -> state.check(copy)));
    }

    /**
     * {@inheritDoc} Here in one step.
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return StoreMeters.timed(kind(), "append", () -> run(() -> {
            state.append(key, copy);
            return null;
        }));
    }

    /**
     * {@inheritDoc} Here they are waited for together.
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed(kind(), "multi_get", () ->
                awaitKeys(copy, timeout, "multiGet of keys " + copy).map(HashStore::copies));
    }

    /**
     * {@inheritDoc} Here in one step: no other caller sees some of the entries without the others.
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> copy = StoreChecks.entries(entries);
        return StoreMeters.timed(kind(), "multi_set", () -> run(() -> {
            state.multiSet(copy);
            return null;
        }));
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = StoreChecks.timeout(timeout);
    }

    /** The number of calls waiting for keys now; {@code FileStore} polls its file only while there are some. */
    int pendingWaits() {
        return pending.size();
    }

    /** Fails every waiting call with {@code cause}, e.g. when the file behind the state turned out malformed. */
    void failWaits(Throwable cause) {
        pending.forEach((waiter, promise) -> {
            if (state.cancel(waiter)) {
                promise.tryFail(cause);
            }
        });
    }

    /**
     * Fails the calls still waiting with {@link IllegalStateException} and every later call likewise; the data is
     * dropped with the object. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        failWaits(closedException());
    }

    private <T> Future<T> run(Callable<T> op) {
        if (closed) {
            return Future.failedFuture(closedException());
        }
        try {
            return Future.succeededFuture(op.call());
        } catch (Exception e) {
            return Future.failedFuture(e);
        }
    }

    private Future<List<byte[]>> awaitKeys(List<String> keys, Duration wait, String what) {
        if (closed) {
            return Future.failedFuture(closedException());
        }
        Promise<List<byte[]>> promise = Promise.promise();
        StoreWaiter waiter = state.await(keys, promise::tryComplete);
        if (promise.future().isComplete()) {
            return promise.future();
        }
        pending.put(waiter, promise);
        ScheduledFuture<?> timer = StoreTimers.schedule(() -> expire(waiter, promise, what, wait), wait);
        promise.future().onComplete(done -> {
            timer.cancel(false);
            pending.remove(waiter);
        });
        if (closed && state.cancel(waiter)) {
            // close() ran between the check above and pending.put: it could not see this waiter.
            promise.tryFail(closedException());
        }
        return promise.future();
    }

    private void expire(StoreWaiter waiter, Promise<?> promise, String what, Duration wait) {
        if (state.cancel(waiter)) {
            promise.tryFail(new TimeoutException(name + ": " + what + " timed out after "
                    + StoreChecks.describe(wait) + "; keys not set: " + state.missing(waiter)));
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException(name + " is closed");
    }

    private static List<byte[]> copies(List<byte[]> values) {
        List<byte[]> copies = new ArrayList<>(values.size());
        for (byte[] value : values) {
            copies.add(value.clone());
        }
        return copies;
    }
}
