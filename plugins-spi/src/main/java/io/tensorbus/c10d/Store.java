package io.tensorbus.c10d;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The rendezvous key-value store that processes of a job share, as c10d's {@code Store}: backends publish
 * their addresses in it and wait for each other's. Keys are strings, values are bytes. Every method returns
 * at once; a method that waits for keys fails with {@link java.util.concurrent.TimeoutException} after
 * {@link #timeout()} (or the timeout it is given), so nothing waits forever.
 *
 * <p>An implementation provides the primitives; the compound operations {@link #append}, {@link #multiGet} and
 * {@link #multiSet} have c10d's defaults over them. Implementations: {@code HashStore}, {@code TcpStore},
 * {@code FileStore}, {@code PrefixStore} and {@code ClusterStore} in {@code io.tensorbus.distributed}.
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

    /**
     * Appends {@code value} to the bytes of {@code key} (creating it when absent). The default is c10d's: a
     * {@link #compareSet} loop that retries while another rank changes the key in between; stores that can append
     * in one step override it.
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    default Future<Void> append(String key, byte[] value) {
        Objects.requireNonNull(key, "key must not be null");
        byte[] tail = Objects.requireNonNull(value, "value must not be null").clone();
        return appendAfter(key, new byte[0], tail);
    }

    private Future<Void> appendAfter(String key, byte[] current, byte[] tail) {
        byte[] desired = Arrays.copyOf(current, current.length + tail.length);
        System.arraycopy(tail, 0, desired, current.length, tail.length);
        // An absent key matches an empty expected value, so the first try also creates the key. A failed swap
        // answers the key's value, or the expected value unchanged when the key is gone: then start again empty.
        return compareSet(key, current, desired).compose(now -> Arrays.equals(now, desired) ? Future.succeededFuture()
                : appendAfter(key, current.length > 0 && Arrays.equals(now, current) ? new byte[0] : now, tail));
    }

    /**
     * The values of all {@code keys}, in order, waiting up to {@link #timeout()} for each to be set. The default
     * is c10d's: one {@link #get} after the other; stores that can fetch them together override it.
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    default Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = List.copyOf(keys);
        Future<List<byte[]>> all = Future.succeededFuture(new ArrayList<>(copy.size()));
        for (String key : copy) {
            all = all.compose(values -> get(key).map(value -> {
                values.add(value);
                return values;
            }));
        }
        return all;
    }

    /**
     * Sets every entry of {@code entries}, in the map's iteration order. The default is c10d's: one {@link #set}
     * after the other, so another rank may see the first entries before the last; stores that can set them in
     * one step override it and say so.
     *
     * @throws NullPointerException when {@code entries}, a key or a value is null
     */
    default Future<Void> multiSet(Map<String, byte[]> entries) {
        Map<String, byte[]> copy = new LinkedHashMap<>();
        entries.forEach((key, value) -> copy.put(Objects.requireNonNull(key, "key must not be null"),
                Objects.requireNonNull(value, "value of '" + key + "' must not be null").clone()));
        Future<Void> all = Future.succeededFuture();
        for (Map.Entry<String, byte[]> entry : copy.entrySet()) {
            all = all.compose(v -> set(entry.getKey(), entry.getValue()));
        }
        return all;
    }

    /**
     * {@code queue_push}: adds {@code value} at the tail of the queue kept in {@code key} (a key used for queue
     * operations only). The default keeps the queue in the key's value and changes it with {@link #compareSet},
     * retrying while other ranks change it in between.
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    default Future<Void> queuePush(String key, byte[] value) {
        Objects.requireNonNull(key, "key must not be null");
        byte[] item = Objects.requireNonNull(value, "value must not be null").clone();
        return queueChange(key, new byte[0], items -> {
            items.add(item);
            return item;
        }).mapEmpty();
    }

    /**
     * {@code queue_pop}: removes and returns the value at the head of the queue in {@code key}, waiting up to
     * {@link #timeout()} for one to be pushed; fails with {@link java.util.concurrent.TimeoutException} naming
     * the key when none comes.
     *
     * @throws NullPointerException when {@code key} is null
     */
    default Future<byte[]> queuePop(String key) {
        Objects.requireNonNull(key, "key must not be null");
        Duration limit = timeout();
        return queuePopBefore(key, System.nanoTime() + limit.toNanos(), limit);
    }

    /** The number of values in the queue in {@code key} (0 when the key is absent). */
    default Future<Long> queueLen(String key) {
        Objects.requireNonNull(key, "key must not be null");
        return check(List.of(key)).compose(present -> present
                ? get(key).map(v -> (long) StoreQueue.items(key, v).size()) : Future.succeededFuture(0L));
    }

    private Future<byte[]> queuePopBefore(String key, long deadline, Duration limit) {
        return queueChange(key, new byte[0], items -> items.isEmpty() ? null : items.removeFirst()).compose(item -> {
            if (item != null) {
                return Future.succeededFuture(item);
            }
            if (System.nanoTime() >= deadline) {
                return Future.failedFuture(new TimeoutException("queuePop of key '" + key
                        + "': the queue stayed empty for " + limit));
            }
            // No store offers a wait for "not empty": look again shortly.
            Executor later = CompletableFuture.delayedExecutor(2,
                    TimeUnit.MILLISECONDS);
            return Future.fromCompletionStage(CompletableFuture.runAsync(() -> { }, later))
                    .compose(v -> queuePopBefore(key, deadline, limit));
        });
    }

    /**
     * Applies {@code change} to the queue's items (read from {@code current}, the value last seen) and swaps the
     * result in; retries from the value the swap found when another rank changed it first. Completes with what
     * {@code change} returned, or null when it returned null (nothing to change, nothing written).
     */
    private Future<byte[]> queueChange(String key, byte[] current,
                                       Function<List<byte[]>, byte[]> change) {
        List<byte[]> items = StoreQueue.items(key, current);
        byte[] result = change.apply(items);
        if (result == null && current.length > 0) {
            return Future.succeededFuture(null);
        }
        byte[] desired = StoreQueue.value(items);
        // An absent key matches an empty expected value; the fresh nonce in desired makes an answer equal to it
        // proof that this swap, not another rank's, wrote it.
        return compareSet(key, current, desired).compose(now -> {
            if (Arrays.equals(now, desired)) {
                return Future.succeededFuture(result);
            }
            boolean gone = current.length > 0 && Arrays.equals(now, current);
            return queueChange(key, gone ? new byte[0] : now, change);
        });
    }

    /** How long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait before failing. */
    Duration timeout();

    /**
     * {@code set_timeout}: how long the calls issued from now on wait before failing (calls already waiting keep
     * their deadline). A store that scopes another ({@code PrefixStore}) sets the other's.
     *
     * @throws NullPointerException when {@code timeout} is null
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    void setTimeout(Duration timeout);

    /** Releases the connection or file; the server side of a TCP store stops serving. */
    @Override
    void close();
}
