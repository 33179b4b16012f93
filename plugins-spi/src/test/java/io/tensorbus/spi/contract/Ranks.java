package io.tensorbus.spi.contract;

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

/**
 * A group of {@code n} backends of one provider in this JVM (ranks as threads would use them), sharing a
 * {@link MemoryStore}; for the contract tests.
 */
public final class Ranks implements AutoCloseable {
    private final List<Backend> backends;

    private Ranks(List<Backend> backends) {
        this.backends = backends;
    }

    /** Creates and connects {@code n} ranks; fails the test after 30 s. */
    public static Ranks create(BackendProvider provider, Vertx vertx, int n, Duration timeout,
                               Map<String, String> properties) throws Exception {
        MemoryStore store = new MemoryStore(timeout);
        String group = "contract-" + System.nanoTime();
        List<Future<Backend>> futures = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            futures.add(provider.create(new BackendOptions(r, n, store, timeout, group, null, vertx, properties)));
        }
        List<Backend> out = new ArrayList<>();
        for (Future<Backend> f : futures) {
            out.add(f.await(30, TimeUnit.SECONDS));
        }
        return new Ranks(out);
    }

    /** The backend of {@code rank}. */
    public Backend get(int rank) {
        return backends.get(rank);
    }

    /** The number of ranks. */
    public int size() {
        return backends.size();
    }

    @Override
    public void close() throws Exception {
        for (Backend b : backends) {
            b.close().await(10, TimeUnit.SECONDS);
        }
    }
}
