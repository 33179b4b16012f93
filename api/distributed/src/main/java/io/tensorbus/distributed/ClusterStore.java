package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.StoreChecks;
import io.tensorbus.distributed.impl.StoreMeters;
import io.tensorbus.distributed.impl.StoreTimers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.shareddata.AsyncMap;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A {@link Store} kept in the cluster-wide shared data of a clustered Vert.x (an {@link AsyncMap} of the cluster
 * manager: Hazelcast in production), so that processes that already share a Vert.x cluster meet without a TCP
 * store and without a master process: every member holds a view, and the data lives as long as the cluster.
 * {@link #open} gives a view; views on different members with the same name share the keys.
 *
 * <p>Semantics are PyTorch's, as {@link HashStore}'s. Writes that read first ({@link #add}, {@link #append},
 * {@link #compareSet}) are compare-and-set loops over the map's {@code putIfAbsent} and
 * {@code replaceIfPresent}, so concurrent writers on any member never lose an update. {@link #get},
 * {@link #multiGet} and {@link #wait} poll the map on Vert.x timers (every 2 ms at first, doubling to 32 ms)
 * until the keys are set, and fail with {@link java.util.concurrent.TimeoutException} naming the keys not set at
 * their deadline, which a JVM-wide timer thread enforces even when the Vert.x instance stops. {@link #multiSet}
 * writes its entries one after the other in the map's iteration order; another member may see some of them
 * before the others.
 *
 * <p>Values are stored as {@link Buffer}s (cluster-serializable, compared by content), never as Java-serialized
 * objects. The keys stay in the cluster after the job: use a fresh name per job, or {@link #clear} it.
 */
public final class ClusterStore implements Store {

    /** The longest name {@link #open} accepts, in chars. */
    public static final int MAX_NAME_LENGTH = 200;
    /** What the map's cluster-wide name starts with, before the store's name. */
    public static final String MAP_PREFIX = "tensorbus.store.";

    private static final long FIRST_POLL_MS = 2;
    private static final long MAX_POLL_MS = 32;

    private final Vertx vertx;
    private final String name;
    private final AsyncMap<String, Buffer> map;
    private volatile Duration timeout;
    private final Set<Promise<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private ClusterStore(Vertx vertx, String name, AsyncMap<String, Buffer> map, Duration timeout) {
        this.vertx = vertx;
        this.name = name;
        this.map = map;
        this.timeout = timeout;
    }

    /**
     * A view of the store {@code name} of the cluster that {@code vertx} belongs to; the future completes once
     * the cluster map is obtained. Views opened with the same name on any member share their keys.
     *
     * @param vertx a clustered Vert.x, e.g. from {@code Vertx.builder().withClusterManager(manager)
     *              .buildClustered()}
     * @param name the store's name, 1 to {@value #MAX_NAME_LENGTH} chars, not blank; the map is
     *             {@value #MAP_PREFIX} + name
     * @param timeout how long {@link #get}, {@link #multiGet} and {@link #wait(List)} wait
     * @return a future that fails when the cluster manager cannot provide the map
     * @throws NullPointerException when an argument is null
     * @throws IllegalArgumentException when {@code vertx} is not clustered, the name is blank or too long, or the
     *                                  timeout is not positive
     */
    public static Future<ClusterStore> open(Vertx vertx, String name, Duration timeout) {
        Objects.requireNonNull(vertx, "vertx must not be null");
        checkName(name);
        StoreChecks.timeout(timeout);
        if (!vertx.isClustered()) {
            throw new IllegalArgumentException("ClusterStore '" + name + "' needs a clustered Vert.x (one built with "
                    + "Vertx.builder().withClusterManager(manager).buildClustered()), got a non-clustered one");
        }
        return vertx.sharedData().<String, Buffer>getAsyncMap(MAP_PREFIX + name)
                .map(map -> new ClusterStore(vertx, name, map, timeout));
    }

    /** {@link #open(Vertx, String, Duration)} with the {@link Distributed#DEFAULT_TIMEOUT}. */
    public static Future<ClusterStore> open(Vertx vertx, String name) {
        return open(vertx, name, Distributed.DEFAULT_TIMEOUT);
    }

    /** The store's name, as given to {@link #open}. */
    public String name() {
        return name;
    }

    /** The cluster-wide name of the map that holds the keys: {@value #MAP_PREFIX} + {@link #name()}. */
    public String mapName() {
        return MAP_PREFIX + name;
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> set(String key, byte[] value) {
        StoreChecks.key(key);
        Buffer copy = Buffer.buffer(StoreChecks.value("value", value));
        return StoreMeters.timed("cluster", "set", () -> live().compose(v -> map.put(key, copy)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<byte[]> get(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed("cluster", "get", () ->
                awaitKeys(List.of(key), timeout, "get of key '" + key + "'").map(values -> values.get(0)));
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
        return StoreMeters.timed("cluster", "add", () -> swap(key, current -> counterText(key, current, delta))
                .map(sum -> Long.parseLong(sum.toString(StandardCharsets.US_ASCII))));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when an argument is null
     */
    @Override
    public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        StoreChecks.key(key);
        Buffer expectedCopy = Buffer.buffer(StoreChecks.value("expected", expected));
        Buffer desiredCopy = Buffer.buffer(StoreChecks.value("desired", desired));
        return StoreMeters.timed("cluster", "compare_set", () ->
                swap(key, current -> (current == null && expectedCopy.length() == 0)
                || expectedCopy.equals(current) ? desiredCopy : null)
                .map(now -> (now == null ? expectedCopy : now).getBytes()));
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
        return StoreMeters.timed("cluster", "wait", () -> awaitKeys(copy, timeout, "wait for keys " + copy).mapEmpty());
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} is null
     */
    @Override
    public Future<Boolean> deleteKey(String key) {
        StoreChecks.key(key);
        return StoreMeters.timed("cluster", "delete", () -> live().compose(v -> map.remove(key)).map(Objects::nonNull));
    }

    /** {@inheritDoc} Every key of the cluster map counts, whichever member set it. */
    @Override
    public Future<Long> numKeys() {
        return StoreMeters.timed("cluster", "num_keys", () -> live().compose(v -> map.size()).map(Integer::longValue));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<Boolean> check(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed("cluster", "check", () ->
                live().compose(v -> getAll(copy)).map(values -> !values.contains(null)));
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    @Override
    public Future<Void> append(String key, byte[] value) {
        StoreChecks.key(key);
        Buffer tail = Buffer.buffer(StoreChecks.value("value", value));
        return StoreMeters.timed("cluster", "append", () -> swap(key, current -> current == null ? tail
                : Buffer.buffer(current.length() + tail.length()).appendBuffer(current).appendBuffer(tail)).mapEmpty());
    }

    /**
     * {@inheritDoc}
     *
     * @throws NullPointerException when {@code keys} or one of them is null
     */
    @Override
    public Future<List<byte[]>> multiGet(List<String> keys) {
        List<String> copy = StoreChecks.keys(keys);
        return StoreMeters.timed("cluster", "multi_get", () -> awaitKeys(copy, timeout, "multiGet of keys " + copy));
    }

    /** {@inheritDoc} */
    @Override
    public Duration timeout() {
        return timeout;
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = StoreChecks.timeout(timeout);
    }

    /**
     * Removes every key of this store from the cluster map, for every member's view: for a job that is done, or
     * before reusing a name. The future fails with {@link IllegalStateException} when this view is closed.
     */
    public Future<Void> clear() {
        return live().compose(v -> map.clear());
    }

    /**
     * Fails the calls of this view still waiting with {@link IllegalStateException}, and every later call
     * likewise. The keys stay in the cluster (other members' views go on) and the Vert.x instance stays open.
     * Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (Promise<?> promise : pending) {
            promise.tryFail(closedException());
        }
    }

    /** A succeeded future, or a failed one once this view is closed. */
    private Future<Void> live() {
        return closed ? Future.failedFuture(closedException()) : Future.succeededFuture();
    }

    /**
     * Replaces the value of {@code key} with {@code next(current)} (current is null when the key is absent)
     * atomically, trying again when another writer came in between; {@code next} returning null writes nothing.
     * Completes with the value the key holds afterwards (null when absent and nothing was written).
     */
    private Future<Buffer> swap(String key, Function<Buffer, Buffer> next) {
        return live().compose(v -> map.get(key)).compose(current -> {
            Buffer desired = next.apply(current);
            if (desired == null) {
                return Future.succeededFuture(current);
            }
            Future<Boolean> swapped = current == null ? map.putIfAbsent(key, desired).map(Objects::isNull)
                    : map.replaceIfPresent(key, current, desired);
            return swapped.compose(done -> done ? Future.succeededFuture(desired) : swap(key, next));
        });
    }

    /** The decimal text of the counter at {@code key} plus {@code delta}, as PyTorch stores counters. */
    private static Buffer counterText(String key, Buffer current, long delta) {
        long value = counter(key, current);
        try {
            return Buffer.buffer(Long.toString(Math.addExact(value, delta)), "US-ASCII");
        } catch (ArithmeticException overflow) {
            throw new ArithmeticException("add(" + delta + ") to key '" + key + "' holding " + value
                    + " overflows a 64-bit counter");
        }
    }

    private static long counter(String key, Buffer current) {
        if (current == null) {
            return 0;
        }
        try {
            return Long.parseLong(current.toString(StandardCharsets.UTF_8).strip());
        } catch (NumberFormatException notANumber) {
            throw new IllegalStateException("add on key '" + key + "' needs a decimal integer counter, but the key "
                    + "holds " + current.length() + " bytes that are not one (set it only through add)");
        }
    }

    /** The values of {@code keys} in order, null for each key not set. */
    private Future<List<Buffer>> getAll(List<String> keys) {
        List<Future<Buffer>> reads = new ArrayList<>(keys.size());
        for (String key : keys) {
            reads.add(map.get(key));
        }
        return Future.all(reads).map(all -> {
            List<Buffer> values = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) {
                values.add(all.resultAt(i));
            }
            return values;
        });
    }

    /** The values of {@code keys} once all are set, polling until {@code wait} has passed. */
    private Future<List<byte[]>> awaitKeys(List<String> keys, Duration wait, String what) {
        if (closed) {
            return Future.failedFuture(closedException());
        }
        KeyPoll poll = new KeyPoll(keys, what, wait);
        pending.add(poll.promise);
        ScheduledFuture<?> deadline = StoreTimers.schedule(poll::expire, wait);
        poll.promise.future().onComplete(done -> {
            deadline.cancel(false);
            pending.remove(poll.promise);
        });
        if (closed) {
            // close() ran between the check above and pending.add: it could not see this poll.
            poll.promise.tryFail(closedException());
        }
        poll.run(FIRST_POLL_MS);
        return poll.promise.future();
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("ClusterStore '" + name + "' is closed");
    }

    /** One caller waiting for keys: reads them all, and reads again later while some are missing. */
    private final class KeyPoll {
        final List<String> keys;
        final String what;
        final Duration wait;
        final Promise<List<byte[]>> promise = Promise.promise();
        /** The keys the last read found missing: what the timeout names. */
        volatile List<String> missing;

        KeyPoll(List<String> keys, String what, Duration wait) {
            this.keys = keys;
            this.what = what;
            this.wait = wait;
            this.missing = keys;
        }

        void run(long delayMs) {
            if (promise.future().isComplete()) {
                return;
            }
            getAll(keys).onComplete(read -> {
                if (read.failed()) {
                    promise.tryFail(read.cause());
                } else if (!read.result().contains(null)) {
                    promise.tryComplete(read.result().stream().map(Buffer::getBytes).toList());
                } else {
                    missing = missingKeys(read.result());
                    schedule(delayMs);
                }
            });
        }

        void schedule(long delayMs) {
            if (promise.future().isComplete()) {
                return;
            }
            try {
                vertx.setTimer(delayMs, id -> run(Math.min(delayMs * 2, MAX_POLL_MS)));
            } catch (RuntimeException stopped) {
                promise.tryFail(new IllegalStateException("ClusterStore '" + name + "': " + what
                        + " cannot go on: the Vert.x instance refused a timer (" + stopped + ")", stopped));
            }
        }

        List<String> missingKeys(List<Buffer> values) {
            List<String> absent = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                if (values.get(i) == null) {
                    absent.add(keys.get(i));
                }
            }
            return absent;
        }

        void expire() {
            promise.tryFail(new TimeoutException("ClusterStore '" + name + "': " + what + " timed out after "
                    + StoreChecks.describe(wait) + "; keys not set: " + missing));
        }
    }

    private static void checkName(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("ClusterStore name must be 1 to " + MAX_NAME_LENGTH
                    + " chars and not blank, got " + (name.isBlank() ? "'" + name + "'" : name.length() + " chars"));
        }
    }
}
