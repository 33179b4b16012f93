package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;

/**
 * A {@link Store} over a {@link StoreState} in this JVM: the body of {@code HashStore}, the in-process view of a
 * {@code TcpStore} server and the waiting side of {@code FileStore}. Futures complete on the thread that sets the
 * awaited key, or on the {@link StoreTimers} thread when they time out.
 */
public final class StoreMemory implements Store {

    private final StoreState state;
    private final Duration timeout;
    private final String name;
    private final Map<StoreWaiter, Promise<?>> pending = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * A view of {@code state}.
     *
     * @param state the keys and values, possibly shared with other views
     * @param timeout how long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait
     * @param name what messages call this store, e.g. {@code "HashStore"}
     */
    public StoreMemory(StoreState state, Duration timeout, String name) {
        this.state = state;
        this.timeout = StoreChecks.timeout(timeout);
        this.name = name;
    }

    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return run(() -> {
            state.set(key, copy);
            return null;
        });
    }

    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return awaitKeys(List.of(key), timeout, "get of key '" + key + "'").map(values -> values.get(0).clone());
    }

    @Override
    public Future<Long> add(String key, long delta) {
        StoreChecks.key(key);
        return run(() -> state.add(key, delta));
    }

    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        byte[] expectedCopy = StoreChecks.value("expected", expected).clone();
        byte[] desiredCopy = StoreChecks.value("desired", desired).clone();
        return run(() -> state.compareSet(key, expectedCopy, desiredCopy).clone());
    }

    @Override
    public Future<Void> wait(List<String> keys, Duration timeout) {
        List<String> copy = StoreChecks.keys(keys);
        StoreChecks.timeout(timeout);
        return awaitKeys(copy, timeout, "wait for keys " + copy).mapEmpty();
    }

    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return run(() -> state.delete(key));
    }

    @Override
    public Future<Long> numKeys() {
        return run(state::size);
    }

    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return run(() -> state.check(copy));
    }

    @Override
    public Future<Void> append(String key, byte[] value) {
        StoreChecks.key(key);
        byte[] copy = StoreChecks.value("value", value).clone();
        return run(() -> {
            state.append(key, copy);
            return null;
        });
    }

    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return awaitKeys(copy, timeout, "multiGet of keys " + copy).map(StoreMemory::copies);
    }

    @Override
    public Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> copy = StoreChecks.entries(entries);
        return run(() -> {
            state.multiSet(copy);
            return null;
        });
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    /** The number of calls waiting for keys now; {@code FileStore} polls its file only while there are some. */
    public int pendingWaits() {
        return pending.size();
    }

    /** Fails every waiting call with {@code cause}, e.g. when the file behind the state turned out malformed. */
    public void failWaits(Throwable cause) {
        pending.forEach((waiter, promise) -> {
            if (state.cancel(waiter)) {
                promise.tryFail(cause);
            }
        });
    }

    /** Fails the waiting calls and every later call; the state itself stays as it is. Idempotent. */
    @Override
    public void close() {
        closed = true;
        failWaits(closedException());
    }

    private <T> Future<T> run(java.util.concurrent.Callable<T> op) {
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
