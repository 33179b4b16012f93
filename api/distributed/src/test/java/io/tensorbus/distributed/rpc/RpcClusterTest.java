package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.test.fakecluster.FakeClusterManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers that meet through a Vert.x cluster ({@code cluster://}; FakeClusterManager, one Vert.x node per
 * worker), and whose agents treat a node that left the cluster as a lost worker.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcClusterTest {
    private final List<Vertx> nodes = new ArrayList<>();
    private final List<RpcAgent> agents = new ArrayList<>();
    private final RpcRegistry registry = new RpcRegistry()
            .registerAsync("test.never", args -> Promise.promise().future())
            .register("test.fetch", args -> {
                try (RRef<Tensor> r = rref(args.get(0))) {
                    return r.toHere();
                }
            });

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }

    private void start(int world) throws Exception {
        String job = "cluster://rpc-" + UUID.randomUUID();
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            Vertx v = Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered()
                    .await(20, TimeUnit.SECONDS);
            nodes.add(v);
            started.add(Rpc.init("worker" + r, r, world, RpcOptions.builder().vertx(v).initMethod(job)
                    .registry(registry).timeout(Duration.ofSeconds(20)).initTimeout(Duration.ofSeconds(20)).build()));
        }
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (RpcAgent a : agents) {
            a.shutdown(false);
        }
        for (Vertx v : nodes) {
            v.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void workersMeetThroughTheClusterCallShareRRefsAndShutDownGracefully() throws Exception {
        start(3);
        assertEquals(5L, (Long) agents.get(0).rpcSync("worker2", "builtin.add", 2, 3));
        try (RRef<Tensor> r = agents.get(0).remote("worker1", "builtin.mul", Tensor.ones(2), 3.0)) {
            Tensor fetched = agents.get(0).rpcSync("worker2", "test.fetch", r);
            assertArrayEquals(new float[] {3, 3}, fetched.toFloatArray());
        }
        Future.all(agents.stream().map(a -> a.shutdown(true)).toList()).await(30, TimeUnit.SECONDS);
        for (RpcAgent a : agents) {
            assertEquals(List.of(), a.rrefLeaks());
        }
    }

    @Test
    void aWorkerWhoseNodeLeavesTheClusterIsLostAndItsCallsFailNamingIt() throws Exception {
        start(3);
        Future<Object> hanging = agents.get(0).rpcAsync("worker1", "test.never");
        Promise<Void> left = Promise.promise();
        ((VertxInternal) nodes.get(1)).clusterManager().leave(left);
        left.future().await(10, TimeUnit.SECONDS);
        ExecutionException e = Assertions.assertThrows(ExecutionException.class,
                () -> hanging.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RpcException && !(e.getCause() instanceof RpcTimeoutException),
                String.valueOf(e.getCause()));
        assertTrue(e.getCause().getMessage().contains("worker1 (rank 1)")
                && e.getCause().getMessage().contains("left the Vert.x cluster"), e.getCause().getMessage());
        RpcException later = Assertions.assertThrows(RpcException.class,
                () -> agents.get(0).rpcSync("worker1", "builtin.add", 1, 1));
        assertTrue(later.getMessage().contains("left the Vert.x cluster"), later.getMessage());
        assertEquals(2L, (Long) agents.get(0).rpcSync("worker2", "builtin.add", 1, 1), "the others go on");
    }
}
