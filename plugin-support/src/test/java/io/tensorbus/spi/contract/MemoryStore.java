package io.tensorbus.spi.contract;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A minimal in-JVM {@link Store} for the contract tests, so that a backend module can run them without the
 * api (which holds the real stores). Keys wait with a deadline; counters are decimal text.
 */
public final class MemoryStore implements Store {
    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "memory-store-timer");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, byte[]> data = new HashMap<>();
    private final Map<String, List<Runnable>> waiters = new HashMap<>();
    private volatile Duration timeout;

    /** A store whose waits fail after {@code timeout}. */
    public MemoryStore(Duration timeout) {
        this.timeout = timeout;
    }

    @Override
    public synchronized Future<Void> set(String key, byte[] value) {
        data.put(key, value.clone());
        List<Runnable> w = waiters.remove(key);
        if (w != null) {
            w.forEach(Runnable::run);
        }
        return Future.succeededFuture();
    }

    @Override
    public synchronized Future<byte[]> get(String key) {
        return wait(List.of(key), timeout).map(v -> value(key));
    }

    private synchronized byte[] value(String key) {
        return data.get(key).clone();
    }

    @Override
    public synchronized Future<Long> add(String key, long delta) {
        byte[] old = data.get(key);
        long v = (old == null ? 0 : Long.parseLong(new String(old))) + delta;
        set(key, Long.toString(v).getBytes());
        return Future.succeededFuture(v);
    }

    @Override
    public synchronized Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        byte[] old = data.get(key);
        if ((old == null && expected.length == 0) || (old != null && Arrays.equals(old, expected))) {
            set(key, desired);
            return Future.succeededFuture(desired.clone());
        }
        return Future.succeededFuture(old == null ? expected.clone() : old.clone());
    }

    @Override
    public synchronized Future<Void> wait(List<String> keys, Duration wait) {
        List<Future<Void>> each = new ArrayList<>();
        for (String k : keys) {
            if (!data.containsKey(k)) {
                Promise<Void> p = Promise.promise();
                waiters.computeIfAbsent(k, x -> new ArrayList<>()).add(p::tryComplete);
                TIMERS.schedule(() -> p.tryFail(new TimeoutException("key '" + k + "' not set within " + wait)),
                        wait.toMillis(), TimeUnit.MILLISECONDS);
                each.add(p.future());
            }
        }
        return Future.all(each).mapEmpty();
    }

    @Override
    public synchronized Future<Boolean> deleteKey(String key) {
        return Future.succeededFuture(data.remove(key) != null);
    }

    @Override
    public synchronized Future<Long> numKeys() {
        return Future.succeededFuture((long) data.size());
    }

    @Override
    public synchronized Future<Boolean> check(List<String> keys) {
        return Future.succeededFuture(data.keySet().containsAll(keys));
    }

    @Override
    public synchronized Future<Void> append(String key, byte[] value) {
        byte[] old = data.getOrDefault(key, new byte[0]);
        byte[] joined = Arrays.copyOf(old, old.length + value.length);
        System.arraycopy(value, 0, joined, old.length, value.length);
        return set(key, joined);
    }

    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        return wait(keys, timeout).map(v -> {
            List<byte[]> out = new ArrayList<>();
            keys.forEach(k -> out.add(value(k)));
            return out;
        });
    }

    @Override
    public synchronized Future<Void> multiSet(Map<String, byte[]> entries) {
        entries.forEach(this::set);
        return Future.succeededFuture();
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public void setTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout=" + timeout + " must be positive");
        }
        this.timeout = timeout;
    }

    @Override
    public void close() {
    }
}
