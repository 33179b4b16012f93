package io.tensorbus.spi.contract;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;

/**
 * A group of {@code n} backends of one provider in this JVM (ranks as threads would use them), sharing a
 * {@link MemoryStore}; for the contract tests. The store and the group name are exposed so that a backend's
 * own tests can find what its ranks published (addresses, ports).
 */
public final class Ranks implements AutoCloseable {
    private final List<Backend> backends;
    private final MemoryStore store;
    private final String groupName;
    private final Duration timeout;
    private final JobSecret secret;
    /** The Vert.x instances these ranks made for themselves, closed with them. */
    private final List<Vertx> ownVertx;

    private Ranks(List<Backend> backends, MemoryStore store, String groupName, Duration timeout, JobSecret secret,
                  List<Vertx> ownVertx) {
        this.backends = backends;
        this.ownVertx = ownVertx;
        this.store = store;
        this.groupName = groupName;
        this.timeout = timeout;
        this.secret = secret;
    }

    /**
     * Creates and connects {@code n} ranks whose operations time out after {@code timeout}, sharing a random
     * job secret as a launched job's ranks do; fails after 30 s.
     */
    public static Ranks create(BackendProvider provider, Vertx vertx, int n, Duration timeout,
                               Map<String, String> properties) throws Exception {
        return create(provider, vertx, n, timeout, properties, JobSecret.random());
    }

    /** {@link #create(BackendProvider, Vertx, int, Duration, Map)} with the job secret {@code secret}. */
    public static Ranks create(BackendProvider provider, Vertx vertx, int n, Duration timeout,
                               Map<String, String> properties, JobSecret secret) throws Exception {
        return create(provider, vertx, n, timeout, properties, secret, UnaryOperator.identity());
    }

    /**
     * As {@link #create(BackendProvider, Vertx, int, Duration, Map, JobSecret)}, each rank's backend seen through
     * {@code placement} (for example {@link BackendContractTest#onDevice}, which stages buffers in device memory).
     */
    public static Ranks create(BackendProvider provider, Vertx vertx, int n, Duration timeout,
                               Map<String, String> properties, JobSecret secret, UnaryOperator<Backend> placement)
            throws Exception {
        return create(provider, r -> vertx, List.of(), n, timeout, properties, secret, placement);
    }

    /**
     * As {@link #create(BackendProvider, Vertx, int, Duration, Map, JobSecret, UnaryOperator)}, each rank on a
     * Vert.x of its own, as {@code tensorbus launch --ranks-as-threads} runs a node's ranks; closed with the ranks.
     */
    public static Ranks createOnOwnVertx(BackendProvider provider, int n, Duration timeout,
                                         Map<String, String> properties, JobSecret secret,
                                         UnaryOperator<Backend> placement) throws Exception {
        List<Vertx> own = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            own.add(Vertx.vertx());
        }
        try {
            return create(provider, own::get, own, n, timeout, properties, secret, placement);
        } catch (Exception e) {
            closeAll(own);
            throw e;
        }
    }

    private static Ranks create(BackendProvider provider, IntFunction<Vertx> vertxOf, List<Vertx> own, int n,
                                Duration timeout, Map<String, String> properties, JobSecret secret,
                                UnaryOperator<Backend> placement) throws Exception {
        MemoryStore store = new MemoryStore(timeout);
        String group = "contract-" + System.nanoTime();
        List<Future<Backend>> futures = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            futures.add(provider.create(new BackendOptions(r, n, store, timeout, group, null, vertxOf.apply(r),
                    properties, secret)));
        }
        List<Backend> out = new ArrayList<>();
        Exception failure = null;
        for (Future<Backend> f : futures) {
            try {
                out.add(placement.apply(f.await(30, TimeUnit.SECONDS)));
            } catch (Exception e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            for (Backend b : out) {
                b.close().await(10, TimeUnit.SECONDS);
            }
            throw failure;
        }
        return new Ranks(out, store, group, timeout, secret, own);
    }

    /** The backend of {@code rank}. */
    public Backend get(int rank) {
        return backends.get(rank);
    }

    /** The number of ranks. */
    public int size() {
        return backends.size();
    }

    /** The rendezvous store the ranks share. */
    public MemoryStore store() {
        return store;
    }

    /** The job secret the ranks share. */
    public JobSecret secret() {
        return secret;
    }

    /** The group's name (unique per instance). */
    public String groupName() {
        return groupName;
    }

    /** The per-operation timeout the group was created with. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Closes every rank (closing is idempotent, so ranks a test already closed are fine), then the Vert.x instances
     * they made.
     */
    @Override
    public void close() throws Exception {
        try {
            for (Backend b : backends) {
                b.close().await(10, TimeUnit.SECONDS);
            }
        } finally {
            closeAll(ownVertx);
        }
    }

    private static void closeAll(List<Vertx> vertx) throws Exception {
        for (Vertx v : vertx) {
            v.close().await(10, TimeUnit.SECONDS);
        }
    }
}
