package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The init methods of the tutorial (env://, tcp://, file://), cluster:// and the failures at set-up. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InitMethodsTest {
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Distributed.newVertx();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Starts every rank's init at once, then checks an allReduce over the groups. */
    private static void allReduceOver(int world, IntFunction<InitOptions> options) throws Exception {
        List<Future<ProcessGroup>> inits = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            inits.add(Distributed.initProcessGroup(options.apply(r)));
        }
        List<ProcessGroup> groups = new ArrayList<>();
        for (Future<ProcessGroup> f : inits) {
            groups.add(f.await(30, TimeUnit.SECONDS));
        }
        List<Tensor> tensors = new ArrayList<>();
        List<Future<Void>> ops = new ArrayList<>();
        for (ProcessGroup g : groups) {
            Tensor t = Tensor.full(g.rank() + 1, DType.FLOAT32, 3);
            tensors.add(t);
            ops.add(g.allReduce(t));
        }
        for (Future<Void> op : ops) {
            op.await(30, TimeUnit.SECONDS);
        }
        for (Tensor t : tensors) {
            assertEquals(world * (world + 1) / 2.0, t.getDouble(2), 0.0);
        }
        for (ProcessGroup g : groups) {
            g.destroy().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void envInitMethodReadsMasterAddressRankAndWorldSize() throws Exception {
        int port = freePort();
        allReduceOver(2, r -> InitOptions.builder().vertx(vertx).environment(Map.of("MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", String.valueOf(port), "RANK", String.valueOf(r), "WORLD_SIZE", "2")).build());
    }

    @Test
    void tcpInitMethodWithThreeRanks() throws Exception {
        int port = freePort();
        allReduceOver(3, r -> InitOptions.builder().vertx(vertx).initMethod("tcp://127.0.0.1:" + port).rank(r)
                .worldSize(3).environment(Map.of()).build());
    }

    @Test
    void fileInitMethodSharesAFile(@TempDir Path dir) throws Exception {
        String url = dir.resolve("rendezvous").toUri().toString();
        allReduceOver(2, r -> InitOptions.builder().vertx(vertx).initMethod(url).rank(r).worldSize(2)
                .environment(Map.of()).build());
    }

    @Test
    void twoJobsShareOneStoreThroughTheirGroupNames() throws Exception {
        HashStore store = new HashStore(Duration.ofSeconds(20));
        allReduceOver(2, r -> InitOptions.builder().vertx(vertx).store(store).groupName("job-a").rank(r).worldSize(2)
                .build());
        allReduceOver(2, r -> InitOptions.builder().vertx(vertx).store(store).groupName("job-b").rank(r).worldSize(2)
                .build());
    }

    @Test
    void clusterInitMethodMeetsThroughTheVertxCluster() throws Exception {
        List<Vertx> members = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                members.add(ClusterStoreTest.clusteredVertx());
            }
            String url = "cluster://job-" + UUID.randomUUID();
            allReduceOver(2, r -> InitOptions.builder().vertx(members.get(r)).initMethod(url).rank(r).worldSize(2)
                    .timeout(Duration.ofSeconds(20)).environment(Map.of()).build());
        } finally {
            for (Vertx member : members) {
                member.close().await(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void clusterInitMethodWithoutAClusteredVertxSaysSo() {
        Throwable e = assertThrows(Throwable.class, () -> Distributed.initProcessGroup(InitOptions.builder()
                .vertx(vertx).initMethod("cluster://job").rank(0).worldSize(1).environment(Map.of()).build())
                .await(10, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("cluster://job") && e.getMessage().contains("clustered Vert.x")
                && e.getMessage().contains("vertx(...)"), e.getMessage());
        Throwable unnamed = assertThrows(Throwable.class, () -> Distributed.initProcessGroup(InitOptions.builder()
                .vertx(vertx).initMethod("cluster://").rank(0).worldSize(1).environment(Map.of()).build())
                .await(10, TimeUnit.SECONDS));
        assertTrue(unnamed.getMessage().contains("no store name"), unnamed.getMessage());
    }

    @Test
    void missingEnvironmentVariablesAreNamed() {
        Throwable e = assertThrows(Throwable.class, () -> Distributed.initProcessGroup(InitOptions.builder()
                .vertx(vertx).environment(Map.of("RANK", "0")).build()).await(10, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("WORLD_SIZE") && e.getMessage().contains("MASTER_ADDR"), e.getMessage());
    }

    @Test
    void unknownBackendListsTheNamesFound() {
        Throwable e = assertThrows(IllegalArgumentException.class, () -> Distributed.initProcessGroup(
                InitOptions.builder().backend("gloo").build()));
        assertTrue(e.getMessage().contains("no backend named 'gloo'") && e.getMessage().contains("tcp"),
                e.getMessage());
    }

    @Test
    void worldSizeMismatchAtInitFailsNamingBothSizes() {
        HashStore store = new HashStore(Duration.ofSeconds(5));
        Future<ProcessGroup> a = Distributed.initProcessGroup(InitOptions.builder().vertx(vertx).store(store).rank(0)
                .worldSize(2).timeout(Duration.ofSeconds(5)).build());
        Future<ProcessGroup> b = Distributed.initProcessGroup(InitOptions.builder().vertx(vertx).store(store).rank(1)
                .worldSize(3).timeout(Duration.ofSeconds(5)).build());
        Throwable e = assertThrows(Throwable.class, () -> b.await(20, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("worldSize=3") && e.getMessage().contains("worldSize=2"), e.getMessage());
        Throwable e0 = assertThrows(Throwable.class, () -> a.await(20, TimeUnit.SECONDS));
        assertTrue(e0.getMessage().contains("worldSize"), e0.getMessage());
    }

    @Test
    void rankOutsideTheWorldIsRefused() {
        Throwable e = assertThrows(Throwable.class, () -> Distributed.initProcessGroup(InitOptions.builder()
                .vertx(vertx).store(new HashStore()).rank(2).worldSize(2).build()).await(10, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("rank=2 is outside [0, 2)"), e.getMessage());
    }

    @Test
    void aPortInUseFailsTheMasterNamingThePort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Throwable e = assertThrows(Throwable.class, () -> Distributed.initProcessGroup(InitOptions.builder()
                    .vertx(vertx).initMethod("tcp://127.0.0.1:" + port).rank(0).worldSize(2)
                    .timeout(Duration.ofSeconds(5)).environment(Map.of()).build()).await(20, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains(String.valueOf(port)), e.getMessage());
        }
    }
}
