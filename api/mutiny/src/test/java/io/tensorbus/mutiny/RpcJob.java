package io.tensorbus.mutiny;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The RPC workers of one job in this JVM, named worker0.., for the faces' tests: one Vert.x, an in-memory store. */
final class RpcJob implements AutoCloseable {
    private final Vertx vertx = Distributed.newVertx();
    private final List<RpcAgent> agents = new ArrayList<>();

    /** Starts {@code n} workers, each with a registry of its own from {@code registry}. */
    RpcJob(int n, Supplier<RpcRegistry> registry) throws Exception {
        HashStore store = new HashStore(Duration.ofSeconds(20));
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            started.add(Rpc.init("worker" + r, r, n, RpcOptions.builder().store(store).vertx(vertx)
                    .secret(JobSecret.of("a secret for the mutiny tests".getBytes(StandardCharsets.UTF_8)))
                    .registry(registry.get()).timeout(Duration.ofSeconds(10)).build()));
        }
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
    }

    RpcAgent get(int rank) {
        return agents.get(rank);
    }

    @Override
    public void close() throws Exception {
        for (RpcAgent a : agents) {
            a.shutdown(false);
        }
        vertx.close().await(10, TimeUnit.SECONDS);
    }
}
