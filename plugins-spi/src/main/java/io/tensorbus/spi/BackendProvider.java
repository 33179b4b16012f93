package io.tensorbus.spi;

import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A communication backend plugin, found by {@link ServiceLoader} ({@code
 * META-INF/services/io.tensorbus.spi.BackendProvider}).
 * Discovery is cheap: {@link #isAvailable()} must not load native libraries eagerly beyond a check, and a
 * provider that cannot run here (no GPU, no OpenCL platform) says why in {@link #unavailabilityCause()}.
 */
public interface BackendProvider {

    /** The name users select the backend by ({@code "tcp"}, {@code "nccl"}, ...): lower case, unique. */
    String name();

    /** True when the backend can run on this machine. */
    boolean isAvailable();

    /** Why {@link #isAvailable()} is false, or null when it is available. */
    Throwable unavailabilityCause();

    /**
     * Creates the backend of one process group: rendezvous with the other members through
     * {@code options.store()} and connect. Completes when the group is ready for operations; fails within
     * {@code options.timeout()} when members are missing or disagree (rank taken twice, different world size).
     */
    Future<Backend> create(BackendOptions options);

    /** Every provider on the class path, in {@link ServiceLoader} order. */
    static List<BackendProvider> all() {
        List<BackendProvider> found = new ArrayList<>();
        ServiceLoader.load(BackendProvider.class).forEach(found::add);
        return found;
    }

    /**
     * The provider called {@code name}.
     *
     * @throws IllegalArgumentException when no provider has that name (the message lists the names found)
     * @throws IllegalStateException when the provider is not available here (its cause attached)
     */
    static BackendProvider named(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("backend name must not be blank");
        }
        List<String> names = new ArrayList<>();
        for (BackendProvider p : all()) {
            if (p.name().equals(name)) {
                if (!p.isAvailable()) {
                    Throwable cause = p.unavailabilityCause();
                    throw new IllegalStateException("backend '" + name + "' is not available on this machine: "
                            + (cause == null ? "no reason given" : cause.getMessage()), cause);
                }
                return p;
            }
            names.add(p.name());
        }
        throw new IllegalArgumentException("no backend named '" + name + "'; found " + names
                + " (a backend is a jar with META-INF/services/" + BackendProvider.class.getName() + ")");
    }
}
