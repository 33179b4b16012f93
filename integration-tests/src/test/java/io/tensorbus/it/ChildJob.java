package io.tensorbus.it;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.TcpStore;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A job of worker JVMs ({@link ChildJvm}) that meet at a store this test hosts on loopback, with a fresh secret:
 * what {@code tensorbus launch} does, except that the other workers live on when one dies (the launcher stops
 * them all). Close it in a try-with-resources: it kills what still runs and closes the store.
 */
final class ChildJob implements AutoCloseable {
    private final Vertx vertx;
    private final TcpStore store;
    private final List<ChildJvm> jvms = new ArrayList<>();

    private ChildJob(Vertx vertx, TcpStore store) {
        this.vertx = vertx;
        this.store = store;
    }

    /** Starts {@code world} workers of {@code mainClass} with {@code args}, RANK 0 to world-1. */
    static ChildJob start(int world, String mainClass, String... args) throws Exception {
        Vertx vertx = Vertx.vertx();
        String secret = JobSecret.newSecretText();
        TcpStore store = TcpStore.server(vertx, "127.0.0.1", 0, Duration.ofSeconds(60),
                JobSecret.of(secret.getBytes(StandardCharsets.UTF_8))).await(20, TimeUnit.SECONDS);
        ChildJob job = new ChildJob(vertx, store);
        try {
            for (int r = 0; r < world; r++) {
                job.jvms.add(ChildJvm.start("worker" + r, Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT",
                        String.valueOf(store.port()), "TENSORBUS_STORE_HOSTED", "1", "RANK", String.valueOf(r),
                        "WORLD_SIZE", String.valueOf(world), JobSecret.ENV, secret), mainClass, args));
            }
            return job;
        } catch (Exception | Error e) {
            job.close();
            throw e;
        }
    }

    /** The worker of {@code rank}. */
    ChildJvm get(int rank) {
        return jvms.get(rank);
    }

    @Override
    public void close() throws TimeoutException {
        jvms.forEach(ChildJvm::close);
        store.closeAsync().await(10, TimeUnit.SECONDS);
        vertx.close().await(10, TimeUnit.SECONDS);
    }
}
