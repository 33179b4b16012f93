package io.tensorbus.it.sample;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A sample third-party backend plugin, {@code "traced"}: a decorator that a third party could ship in a jar of
 * its own. It names no tensorbus class but the SPI's: it finds the backend it wraps by name through
 * {@link BackendProvider#named(String)} ({@code "tcp"}, or the {@code traced.delegate} property), delegates every
 * operation to it and counts the calls per operation name ({@link #count(String)}, {@link #counts()}).
 * Users select it with {@code InitOptions.builder().backend("traced")}; nothing else changes.
 *
 * <p>It is registered in {@code META-INF/services/io.tensorbus.spi.BackendProvider} of this module's main
 * source set, so the module's jar is exactly what such a plugin looks like on a class path.
 */
public final class TracingBackendProvider implements BackendProvider {
    /** The name users select this backend by. */
    public static final String NAME = "traced";

    /** The property naming the wrapped backend; {@code tcp} when absent. */
    public static final String DELEGATE_PROPERTY = "traced.delegate";

    private static final Map<String, LongAdder> COUNTS = new ConcurrentHashMap<>();

    /** The no-argument constructor {@link java.util.ServiceLoader} calls. */
    public TracingBackendProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Available when the wrapped backend is; looked up lazily, so discovery stays cheap. */
    @Override
    public boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    @Override
    public Throwable unavailabilityCause() {
        try {
            BackendProvider.named("tcp");
            return null;
        } catch (RuntimeException e) {
            return new IllegalStateException("the backend 'traced' wraps is not usable: " + e.getMessage(), e);
        }
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        String delegate = options.property(DELEGATE_PROPERTY, "tcp");
        if (delegate.equals(NAME)) {
            return Future.failedFuture(new IllegalArgumentException(DELEGATE_PROPERTY + "=" + NAME
                    + " would wrap itself; name another backend"));
        }
        BackendProvider inner;
        try {
            inner = BackendProvider.named(delegate);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        record("create");
        return inner.create(options).map(TracingBackend::new);
    }

    /** How many times operation {@code op} ({@code "allReduce"}, {@code "send"}, {@code "create"}, ...) was called. */
    public static long count(String op) {
        LongAdder a = COUNTS.get(op);
        return a == null ? 0 : a.sum();
    }

    /** Every operation called so far with its count, sorted by name (a snapshot). */
    public static Map<String, Long> counts() {
        Map<String, Long> out = new TreeMap<>();
        COUNTS.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** Forgets the counts. */
    public static void reset() {
        COUNTS.clear();
    }

    static void record(String op) {
        COUNTS.computeIfAbsent(op, k -> new LongAdder()).increment();
    }
}
