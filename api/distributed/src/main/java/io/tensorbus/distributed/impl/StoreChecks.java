package io.tensorbus.distributed.impl;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Argument checks shared by the stores, so that every store rejects the same bad input with the same message.
 * Each check returns its (copied where mutable) argument, so a caller that keeps it is safe from later changes.
 */
public final class StoreChecks {

    private StoreChecks() {
    }

    /** {@code key} itself; throws {@link NullPointerException} when it is null. Any other string is a key. */
    public static String key(String key) {
        return Objects.requireNonNull(key, "key must not be null (any string, also empty, is a key)");
    }

    /** {@code value} itself; throws {@link NullPointerException} naming {@code what} when it is null. */
    public static byte[] value(String what, byte[] value) {
        return Objects.requireNonNull(value, () -> what + " must not be null (use an empty array for no bytes)");
    }

    /**
     * An unmodifiable copy of {@code keys}; throws {@link NullPointerException} when the list or one of its
     * elements is null, naming the index.
     */
    public static List<String> keys(List<String> keys) {
        Objects.requireNonNull(keys, "keys must not be null (use an empty list for no keys)");
        List<String> copy = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            if (key == null) {
                throw new NullPointerException("keys[" + i + "] is null; every key must be a non-null string");
            }
            copy.add(key);
        }
        return Collections.unmodifiableList(copy);
    }

    /**
     * A copy of {@code entries} in their iteration order; throws {@link NullPointerException} when the map, a
     * key or a value is null.
     */
    public static Map<String, byte[]> entries(Map<String, byte[]> entries) {
        Objects.requireNonNull(entries, "entries must not be null (use an empty map for no entries)");
        Map<String, byte[]> copy = new LinkedHashMap<>();
        entries.forEach((key, value) -> {
            if (key == null) {
                throw new NullPointerException("entries has a null key; every key must be a non-null string");
            }
            if (value == null) {
                throw new NullPointerException("entries['" + key + "'] is null; use an empty array for no bytes");
            }
            copy.put(key, value.clone());
        });
        return copy;
    }

    /**
     * {@code timeout} itself when it is positive. Zero is refused too: PyTorch reads 0 as "no timeout", which
     * would let a wait hang forever, and nothing in tensorbus waits forever.
     *
     * @throws NullPointerException when {@code timeout} is null
     * @throws IllegalArgumentException when it is zero or negative
     */
    public static Duration timeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout
                    + " (a store never waits forever, so PyTorch's 0 = no timeout is not supported)");
        }
        return timeout;
    }

    /** {@code timeout} in whole milliseconds, at least 1, saturating at {@link Long#MAX_VALUE}. */
    public static long millis(Duration timeout) {
        try {
            return Math.max(1, timeout.toMillis());
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** {@code timeout} as people read it in a message, e.g. {@code "250 ms"}. */
    public static String describe(Duration timeout) {
        return millis(timeout) + " ms";
    }

    /** {@code port} when it is a TCP port (0 to 65535; 0 only when {@code zeroAllowed}). */
    public static int port(int port, boolean zeroAllowed) {
        int min = zeroAllowed ? 0 : 1;
        if (port < min || port > 65535) {
            throw new IllegalArgumentException("port must be in [" + min + ", 65535]"
                    + (zeroAllowed ? " (0 binds a free port)" : "") + ", got " + port);
        }
        return port;
    }

    /** {@code host} when it is neither null nor blank. */
    public static String host(String host) {
        Objects.requireNonNull(host, "host must not be null (e.g. \"127.0.0.1\")");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host must not be blank (e.g. \"127.0.0.1\")");
        }
        return host;
    }
}
