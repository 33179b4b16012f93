package io.tensorbus.distributed.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.FileStore;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.TcpStore;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.parallel.Mlp;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The meters tensorbus records into a bound registry: counts, bytes and outcomes of known operations. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TensorbusMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final TensorbusMetrics metrics = new TensorbusMetrics();

    @BeforeEach
    void bind() {
        metrics.bindTo(registry);
    }

    @AfterEach
    void unbind() {
        metrics.close();
    }

    private Timer timer(String name, String... tags) {
        return registry.find(name).tags(tags).timer();
    }

    @Test
    void collectivesAndMessagesAreCountedWithTheBytesEachRankGave() {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("metered"), pg -> {
            Tensor t = Tensor.zeros(256);
            for (int i = 0; i < 3; i++) {
                pg.allReduce(t).await(10, TimeUnit.SECONDS);
            }
            pg.broadcast(Tensor.zeros(2, 2), 0).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                pg.send(Tensor.zeros(10), 1);
            } else {
                pg.recv(Tensor.zeros(10), 0);
            }
        });
        for (String rank : new String[] {"0", "1"}) {
            Timer allReduce = timer("tensorbus.collective", "group", "metered", "rank", rank, "op", "allReduce",
                    "dtype", "float32", "size", "<=4KiB", "outcome", "success");
            assertEquals(3, allReduce.count(), "rank " + rank);
            assertTrue(allReduce.totalTime(TimeUnit.NANOSECONDS) > 0);
            Counter bytes = registry.find("tensorbus.collective.bytes").tags("group", "metered", "rank", rank, "op",
                    "allReduce").counter();
            assertEquals(3 * 1024, bytes.count());
            assertEquals(1, timer("tensorbus.collective", "group", "metered", "rank", rank, "op", "broadcast",
                    "size", "<=16B").count());
        }
        assertEquals(1, timer("tensorbus.p2p", "group", "metered", "rank", "0", "op", "send").count());
        assertEquals(1, timer("tensorbus.p2p", "group", "metered", "rank", "1", "op", "recv").count());
        assertEquals(40, registry.find("tensorbus.p2p.bytes").tags("rank", "1", "op", "recv").counter().count());
    }

    @Test
    void aFailedCollectiveIsCountedAsAFailure() {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("failing"), pg -> {
            // Different sizes: the collective's fingerprints differ, and it fails on both ranks.
            Tensor t = Tensor.zeros(pg.rank() == 0 ? 4 : 8);
            assertThrows(CommunicationException.class, () -> pg.allReduce(t).await(10, TimeUnit.SECONDS));
        });
        for (String rank : new String[] {"0", "1"}) {
            assertEquals(1, timer("tensorbus.collective", "group", "failing", "rank", rank, "op", "allReduce",
                    "outcome", "failure").count());
            Timer succeeded = timer("tensorbus.collective", "group", "failing", "rank", rank, "outcome", "success");
            assertTrue(succeeded == null || succeeded.count() == 0, "no success");
        }
    }

    @Test
    void nothingIsRecordedWhileNoRegistryIsBound() {
        metrics.close();
        assertFalse(TensorbusMetrics.enabled());
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("unmetered"), pg ->
                pg.allReduce(Tensor.zeros(4)).await(10, TimeUnit.SECONDS));
        metrics.bindTo(registry);
        assertTrue(TensorbusMetrics.enabled());
        assertNull(timer("tensorbus.collective", "group", "unmetered"));
    }

    @Test
    void rpcCallsAreTimedOnBothSidesAndTheirGaugesFollowTheAgent() throws Exception {
        RpcRegistry functions = new RpcRegistry().register("twice", args -> ((Tensor) args.get(0)).mul(2));
        Promise<Void> release = Promise.promise();
        functions.registerAsync("parked", args -> release.future().map(v -> 1));
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions))) {
            RpcAgent a = w.get(0);
            for (int i = 0; i < 4; i++) {
                a.rpcSync("worker1", "twice", Tensor.zeros(16));
            }
            var parked = a.rpcAsync("worker1", "parked");
            Gauge inFlight = registry.find("tensorbus.rpc.calls.in.flight").tags("worker", "worker0").gauge();
            assertEquals(1.0, inFlight.value());
            release.complete();
            parked.await(10, TimeUnit.SECONDS);
            assertEquals(0.0, inFlight.value());
            assertEquals(4, timer("tensorbus.rpc.calls", "worker", "worker0", "function", "twice", "outcome",
                    "success").count());
            assertTrue(registry.find("tensorbus.rpc.calls.bytes").tags("function", "twice").counter().count()
                    >= 4 * 64, "the tensors' bytes are counted");
            RpcWorkers.eventually(() -> timer("tensorbus.rpc.served", "worker", "worker1", "function", "twice")
                    != null && timer("tensorbus.rpc.served", "worker", "worker1", "function", "twice").count() == 4,
                    "the callee timed the four calls it served");
            var rref = a.remote("worker1", "twice", Tensor.zeros(2));
            rref.toHere();
            Gauge owned = registry.find("tensorbus.rrefs").tags("worker", "worker1", "role", "owner").gauge();
            assertEquals(1.0, owned.value());
            assertEquals(1.0, registry.find("tensorbus.rrefs").tags("worker", "worker0", "role", "user").gauge()
                    .value());
            assertEquals(0.0, registry.find("tensorbus.dist.autograd.contexts").tags("worker", "worker0").gauge()
                    .value());
            rref.close();
        }
        assertNull(registry.find("tensorbus.rpc.calls.in.flight").tags("worker", "worker0").gauge(),
                "a closed agent's gauges are removed");
    }

    @Test
    void storeRequestsAreTimedByOperation() throws Exception {
        Vertx vertx = Distributed.newVertx();
        try {
            TcpStore server = TcpStore.server(vertx, "127.0.0.1", 0).await(10, TimeUnit.SECONDS);
            TcpStore client = TcpStore.client(vertx, "127.0.0.1", server.port()).await(10, TimeUnit.SECONDS);
            client.set("k", new byte[] {1}).await(10, TimeUnit.SECONDS);
            client.get("k").await(10, TimeUnit.SECONDS);
            client.get("k").await(10, TimeUnit.SECONDS);
            assertEquals(2, timer("tensorbus.store", "store", "tcp", "op", "get", "outcome", "success").count());
            assertEquals(1, timer("tensorbus.store", "op", "set").count());
            client.close();
            server.close();
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void hashAndFileStoresTimeTheirRequestsByKindAndOperation(@TempDir Path dir) throws Exception {
        try (HashStore hash = new HashStore(); FileStore file = new FileStore(dir.resolve("store"), 1)) {
            for (Store store : List.of(hash, file)) {
                store.set("k", new byte[] {1}).await(10, TimeUnit.SECONDS);
                store.add("n", 2).await(10, TimeUnit.SECONDS);
                store.get("k").await(10, TimeUnit.SECONDS);
                store.get("k").await(10, TimeUnit.SECONDS);
                assertThrows(TimeoutException.class, () -> store.wait(List.of("never"), Duration.ofMillis(50))
                        .await(10, TimeUnit.SECONDS));
            }
        }
        for (String kind : List.of("hash", "file")) {
            assertEquals(2, timer("tensorbus.store", "store", kind, "op", "get", "outcome", "success").count(), kind);
            assertEquals(1, timer("tensorbus.store", "store", kind, "op", "add", "outcome", "success").count(), kind);
            assertEquals(1, timer("tensorbus.store", "store", kind, "op", "wait", "outcome", "failure").count(), kind);
        }
    }

    @Test
    void ddpStepsBucketsAndTheirOverlapAreRecorded() {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("ddp-metered"), pg -> {
            DistributedDataParallel ddp = DistributedDataParallel.builder(new Mlp(7), pg).build();
            for (int step = 0; step < 3; step++) {
                Tensor x = Tensor.ones(4, 8);
                ddp.forward(x).sum().backward();
            }
        });
        for (String rank : new String[] {"0", "1"}) {
            assertEquals(3, timer("tensorbus.ddp.step", "rank", rank, "outcome", "success").count());
            Timer buckets = timer("tensorbus.ddp.bucket.allreduce", "rank", rank, "outcome", "success");
            // The model (212 parameters) fits in the first bucket (1 MiB, whatever the cap): one bucket a step.
            assertEquals(3, buckets.count());
            DistributionSummary overlap = registry.find("tensorbus.ddp.overlap").tags("rank", rank).summary();
            assertEquals(3, overlap.count());
            assertTrue(overlap.max() >= 0 && overlap.max() <= 1, "a share: " + overlap.max());
        }
    }

    @Test
    void aSendThatFindsTheSharedMemoryRingFullIsCountedWhileItsGroupLives() {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("stalling")
                .property("tcp.sharedMemoryRingBytes", Integer.toString(64 << 10)), pg -> {
            Tensor big = Tensor.zeros(4 << 20);
            String rank = Integer.toString(pg.rank());
            FunctionCounter full = registry.find("tensorbus.backend.shm.ring.full").tags("group", "stalling", "rank",
                    rank, "backend", "tcp").functionCounter();
            assertNotNull(full, "rank " + rank + "'s ring counter");
            assertEquals(0.0, full.count());
            pg.barrier().await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                pg.send(big, 1);
                assertTrue(full.count() >= 1, "a 16 MiB send through a 64 KiB ring waits for room: " + full.count());
                FunctionCounter waited = registry.find("tensorbus.backend.shm.ring.full.time").tags("rank", "0",
                        "group", "stalling").functionCounter();
                // How long depends on how much the receiver's side drains before its receive is posted; some.
                assertTrue(waited.count() > 0, "it waited for room: " + waited.count() + " s");
                assertEquals("seconds", waited.getId().getBaseUnit());
            } else {
                Thread.sleep(300);
                pg.recv(big, 0);
                assertEquals(0.0, full.count(), "the receiver wrote nothing");
            }
            pg.barrier().await(10, TimeUnit.SECONDS);
        });
        assertNull(registry.find("tensorbus.backend.shm.ring.full").tags("group", "stalling").functionCounter(),
                "a destroyed group's counters are gone");
    }

    @Test
    void aVertxMadeWhileMetricsAreOnReportsItsOwnNetMetrics() {
        Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("vertx-metered")
                .property("tcp.sharedMemory", "false"), pg -> {
            pg.allReduce(Tensor.ones(1024)).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                List<String> net = registry.getMeters().stream().map(m -> m.getId().getName())
                        .filter(n -> n.startsWith("vertx.net.")).distinct().sorted().toList();
                assertTrue(net.stream().anyMatch(n -> n.endsWith("bytes.written")), "Vert.x's net meters: " + net);
            }
            pg.barrier().await(10, TimeUnit.SECONDS);
        });
    }

    @Test
    void hostMemoryIsAGaugeInBytes() {
        Tensor kept = Tensor.zeros(1 << 20);
        Gauge allocated = registry.find("tensorbus.memory.allocated").tags("device", "cpu").gauge();
        assertTrue(allocated.value() >= 4 << 20, "at least the 4 MiB held: " + allocated.value());
        assertEquals("bytes", allocated.getId().getBaseUnit());
        assertEquals(1 << 20, kept.numel());
    }
}
