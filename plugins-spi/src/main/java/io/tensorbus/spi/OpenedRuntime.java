package io.tensorbus.spi;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * A {@link DeviceRuntime} opened once per JVM on first use, or the reason there is none: what a
 * {@link DeviceRuntimeProvider} holds, so that constructing the provider ({@code ServiceLoader} does, for every
 * jar on the class path) loads no native library, and every later question gets the same answer.
 *
 * @param <R> the runtime's type
 */
public final class OpenedRuntime<R extends DeviceRuntime> {
    private final Supplier<R> opener;
    /** Set, after {@link #runtime} and {@link #cause}, once the opener has run: later reads take no lock. */
    private volatile boolean opened;
    private R runtime;
    private Throwable cause;

    /**
     * A runtime that {@code opener} opens on first use; the opener returns it, or throws an exception whose
     * message says why there is none here and what to install.
     *
     * @throws NullPointerException when {@code opener} is null
     */
    public OpenedRuntime(Supplier<R> opener) {
        this.opener = Objects.requireNonNull(opener, "opener");
    }

    /** True when the runtime opened (opening it now if nobody asked before). */
    public boolean isAvailable() {
        open();
        return runtime != null;
    }

    /** Why the runtime did not open, or null when it did (opening it now if nobody asked before). */
    public Throwable cause() {
        open();
        return cause;
    }

    /**
     * The runtime (opening it now if nobody asked before).
     *
     * @throws IllegalStateException when it could not be opened here, with the reason as its cause
     */
    public R get() {
        open();
        if (runtime == null) {
            throw new IllegalStateException(cause.getMessage(), cause);
        }
        return runtime;
    }

    private void open() {
        if (opened) {
            return;
        }
        synchronized (this) {
            if (opened) {
                return;
            }
            try {
                runtime = Objects.requireNonNull(opener.get(), "the opener returned no runtime");
            } catch (Throwable t) {
                cause = t;
            }
            opened = true;
        }
    }
}
