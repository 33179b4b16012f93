package io.tensorbus.distributed.impl;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The keys and values of an in-memory store with PyTorch's semantics, and the callers waiting for keys. Thread-safe:
 * every method takes this object's lock, and waiter callbacks run after the lock is released (on the thread
 * whose write completed them), so a callback may call back into the state.
 *
 * <p>The state takes ownership of the arrays it is given and hands out its own arrays: callers that expose them
 * to users copy them. It never changes an array in place (append makes a new one), so a handed-out array
 * stays valid.
 */
public final class StoreState {

    private final Map<String, byte[]> values = new HashMap<>();
    private final Map<String, List<StoreWaiter>> waiting = new HashMap<>();

    /** An empty state with nobody waiting. */
    public StoreState() {
    }

    /** The value of {@code key}, or null when it is not set. */
    public synchronized byte[] get(String key) {
        return values.get(key);
    }

    /** Sets {@code key} and completes the waiters it was the last missing key of. */
    public void set(String key, byte[] value) {
        List<StoreWaiter> ready;
        synchronized (this) {
            ready = put(key, value);
        }
        fire(ready);
    }

    /**
     * Adds {@code delta} to the decimal counter at {@code key} (absent is 0) and returns the sum.
     *
     * @throws IllegalStateException when the key holds something other than a decimal long
     * @throws ArithmeticException when the sum overflows a long
     */
    public long add(String key, long delta) {
        List<StoreWaiter> ready;
        long sum;
        synchronized (this) {
            long current = counter(key, values.get(key));
            try {
                sum = Math.addExact(current, delta);
            } catch (ArithmeticException overflow) {
                throw new ArithmeticException("add(" + delta + ") to key '" + key + "' holding " + current
                        + " overflows a 64-bit counter");
            }
            ready = put(key, Long.toString(sum).getBytes(StandardCharsets.US_ASCII));
        }
        fire(ready);
        return sum;
    }

    /**
     * PyTorch's compare-and-set: sets {@code desired} when the key holds {@code expected} (or is absent and
     * {@code expected} is empty) and returns {@code desired}; returns {@code expected} when the key is absent;
     * otherwise returns the current value and changes nothing.
     */
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        List<StoreWaiter> ready;
        byte[] result;
        synchronized (this) {
            byte[] current = values.get(key);
            if ((current == null && expected.length == 0) || (current != null && Arrays.equals(current, expected))) {
                ready = put(key, desired);
                result = desired;
            } else {
                ready = List.of();
                result = current == null ? expected : current;
            }
        }
        fire(ready);
        return result;
    }

    /** Appends {@code value} to the bytes of {@code key}, creating it when absent. */
    public void append(String key, byte[] value) {
        List<StoreWaiter> ready;
        synchronized (this) {
            byte[] current = values.get(key);
            byte[] joined = value;
            if (current != null) {
                joined = Arrays.copyOf(current, current.length + value.length);
                System.arraycopy(value, 0, joined, current.length, value.length);
            }
            ready = put(key, joined);
        }
        fire(ready);
    }

    /** Sets every entry in iteration order, as one step for the other threads. */
    public void multiSet(Map<String, byte[]> entries) {
        List<StoreWaiter> ready = new ArrayList<>();
        synchronized (this) {
            entries.forEach((key, value) -> ready.addAll(put(key, value)));
        }
        fire(ready);
    }

    /** Deletes {@code key}; true when it was set. Waiters are not affected: they wait for a later set. */
    public synchronized boolean delete(String key) {
        return values.remove(key) != null;
    }

    /** The number of keys set. */
    public synchronized long size() {
        return values.size();
    }

    /** The number of keys set that {@code counted} accepts. */
    public synchronized long count(Predicate<String> counted) {
        return values.keySet().stream().filter(counted).count();
    }

    /** True when every key of {@code keys} is set. */
    public synchronized boolean check(List<String> keys) {
        return values.keySet().containsAll(keys);
    }

    /**
     * Calls {@code onReady} with the values of {@code keys} (in order) once all are set: at once, on this thread,
     * when they already are. Returns the waiter, for {@link #cancel} and {@link #missing}.
     */
    public StoreWaiter await(List<String> keys, Consumer<List<byte[]>> onReady) {
        StoreWaiter waiter = new StoreWaiter(keys, onReady);
        synchronized (this) {
            register(waiter);
        }
        if (waiter.values != null) {
            waiter.fire();
        }
        return waiter;
    }

    /** Stops {@code waiter}; true when it had not fired yet (so its callback will never run). */
    public synchronized boolean cancel(StoreWaiter waiter) {
        if (waiter.done) {
            return false;
        }
        waiter.done = true;
        for (String key : waiter.missing) {
            List<StoreWaiter> list = waiting.get(key);
            if (list != null) {
                list.remove(waiter);
                if (list.isEmpty()) {
                    waiting.remove(key);
                }
            }
        }
        return true;
    }

    /** The keys {@code waiter} still waits for, in the order it asked for them. */
    public synchronized List<String> missing(StoreWaiter waiter) {
        return waiter.missingSnapshot();
    }

    /** The value of a counter as a long; absent is 0. */
    private static long counter(String key, byte[] value) {
        if (value == null) {
            return 0;
        }
        String text = new String(value, StandardCharsets.UTF_8);
        try {
            return Long.parseLong(text.strip());
        } catch (NumberFormatException notANumber) {
            throw new IllegalStateException("add on key '" + key
                    + "' needs a decimal integer counter, but the key holds "
                    + value.length + " bytes that are not one (set it only through add)");
        }
    }

    /** Stores the value and returns the waiters that are now complete; call under the lock. */
    private List<StoreWaiter> put(String key, byte[] value) {
        values.put(key, value);
        List<StoreWaiter> list = waiting.remove(key);
        if (list == null) {
            return List.of();
        }
        List<StoreWaiter> ready = new ArrayList<>();
        for (StoreWaiter waiter : list) {
            waiter.missing.remove(key);
            if (waiter.missing.isEmpty()) {
                // One of its keys may have been deleted since it was found set: register checks them all again.
                register(waiter);
                if (waiter.values != null) {
                    ready.add(waiter);
                }
            }
        }
        return ready;
    }

    /** Records which keys the waiter lacks and queues it for them, or snapshots its values; under the lock. */
    private void register(StoreWaiter waiter) {
        for (String key : waiter.keys) {
            if (!values.containsKey(key)) {
                waiter.missing.add(key);
            }
        }
        if (waiter.missing.isEmpty()) {
            waiter.done = true;
            List<byte[]> snapshot = new ArrayList<>(waiter.keys.size());
            for (String key : waiter.keys) {
                snapshot.add(values.get(key));
            }
            waiter.values = snapshot;
            return;
        }
        for (String key : waiter.missing) {
            waiting.computeIfAbsent(key, k -> new ArrayList<>()).add(waiter);
        }
    }

    private static void fire(List<StoreWaiter> ready) {
        for (StoreWaiter waiter : ready) {
            waiter.fire();
        }
    }
}
