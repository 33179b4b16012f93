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

    private Ranks(List<Backend> backends, MemoryStore store, String groupName, Duration timeout, JobSecret secret) {
        this.backends = backends;
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
        MemoryStore store = new MemoryStore(timeout);
        String group = "contract-" + System.nanoTime();
        List<Future<Backend>> futures = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            futures.add(provider.create(new BackendOptions(r, n, store, timeout, group, null, vertx, properties,
                    secret)));
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
        return new Ranks(out, store, group, timeout, secret);
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

    /** Closes every rank (closing is idempotent, so ranks a test already closed are fine). */
    @Override
    public void close() throws Exception {
        for (Backend b : backends) {
            b.close().await(10, TimeUnit.SECONDS);
        }
    }
}
