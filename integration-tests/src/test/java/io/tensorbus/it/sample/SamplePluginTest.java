package io.tensorbus.it.sample;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample plugins of {@code io.tensorbus.it.sample}, found only through {@code ServiceLoader}: users select
 * {@code traced} by name in {@code InitOptions} and see what an unavailable backend says.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SamplePluginTest {
    private static final int WORLD = 2;
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Distributed.newVertx();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    /** Runs {@code op} on every rank at once (each returns a future) and waits for all. */
    private static <T> List<T> onAll(List<ProcessGroup> groups, IntFunction<Future<T>> op) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < groups.size(); r++) {
            fs.add(op.apply(r));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            out.add(f.await(30, TimeUnit.SECONDS));
        }
        return out;
    }

    @Test
    void initProcessGroupWithTheTracedBackendDelegatesAndCountsEveryCall() throws Exception {
        TracingBackendProvider.reset();
        HashStore store = new HashStore(Duration.ofSeconds(20));
        List<Future<ProcessGroup>> inits = new ArrayList<>();
        for (int r = 0; r < WORLD; r++) {
            inits.add(Distributed.initProcessGroup(InitOptions.builder().backend("traced").vertx(vertx).store(store)
                    .rank(r).worldSize(WORLD).timeout(Duration.ofSeconds(20)).build()));
        }
        List<ProcessGroup> groups = new ArrayList<>();
        for (Future<ProcessGroup> f : inits) {
            groups.add(f.await(30, TimeUnit.SECONDS));
        }
        try {
            assertEquals("traced", groups.get(0).backendName());
            assertEquals(WORLD, TracingBackendProvider.count("create"));

            List<Tensor> t = new ArrayList<>();
            for (int r = 0; r < WORLD; r++) {
                t.add(Tensor.full(r + 1, DType.FLOAT32, 1000));
            }
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.MAX)) {
                onAll(groups, r -> groups.get(r).allReduce(t.get(r), op));
            }
            assertEquals(3.0, t.get(1).getDouble(999), 0.0);

            Tensor[] b = {Tensor.full(7, DType.FLOAT32, 4), Tensor.zeros(4)};
            onAll(groups, r -> groups.get(r).broadcast(b[r], 0));
            assertEquals(7.0, b[1].getDouble(3), 0.0);

            Tensor msg = Tensor.full(5, DType.INT64, 3);
            Tensor got = Tensor.zeros(DType.INT64, 3);
            Future<Integer> recv = groups.get(1).irecv(got, 0, 11);
            groups.get(0).isend(msg, 1, 11).await(30, TimeUnit.SECONDS);
            assertEquals(0, recv.await(30, TimeUnit.SECONDS));
            assertEquals(5, got.getLong(2));

            List<List<Tensor>> gathered = List.of(List.of(Tensor.zeros(2), Tensor.zeros(2)),
                    List.of(Tensor.zeros(2), Tensor.zeros(2)));
            onAll(groups, r -> groups.get(r).allGather(gathered.get(r), Tensor.full(r, DType.FLOAT32, 2)));
            assertEquals(1.0, gathered.get(0).get(1).getDouble(0), 0.0);

            onAll(groups, r -> groups.get(r).barrier());

            // A subgroup is created through the plugin too (ProcessGroup finds the backend by its name).
            List<ProcessGroup> subs = onAll(groups, r -> Distributed.newGroup(groups.get(r), 0, 1));
            try {
                assertEquals("traced", subs.get(0).backendName());
                Tensor[] s = {Tensor.ones(2), Tensor.ones(2)};
                onAll(subs, r -> subs.get(r).allReduce(s[r]));
                assertEquals(2.0, s[0].getDouble(0), 0.0);
            } finally {
                for (ProcessGroup g : subs) {
                    g.destroy().await(10, TimeUnit.SECONDS);
                }
            }

            Map<String, Long> c = TracingBackendProvider.counts();
            assertEquals(2L * WORLD, c.get("create"), c.toString());
            assertEquals(3L * WORLD, c.get("allReduce"), c.toString());
            assertEquals(WORLD, c.get("broadcast"), c.toString());
            assertEquals(WORLD, c.get("allGather"), c.toString());
            assertEquals(WORLD, c.get("barrier"), c.toString());
            assertEquals(1L, c.get("send"), c.toString());
            assertEquals(1L, c.get("recv"), c.toString());
            assertEquals(WORLD, c.get("close"), c.toString());
            assertFalse(c.containsKey("allToAll"), c.toString());
        } finally {
            for (ProcessGroup g : groups) {
                g.destroy().await(10, TimeUnit.SECONDS);
            }
        }
        assertEquals(2L * WORLD, TracingBackendProvider.count("close"), TracingBackendProvider.counts().toString());
    }

    @Test
    void anUnavailableBackendFailsWithItsCause() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Distributed.initProcessGroup(
                InitOptions.builder().backend("unavailable-sample").vertx(vertx).store(new HashStore()).rank(0)
                        .worldSize(1).build()));
        assertTrue(e.getMessage().contains("unavailable-sample") && e.getMessage().contains(
                "needs a device this machine lacks"), e.getMessage());
        assertInstanceOf(UnsupportedOperationException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("needs a device this machine lacks"));
    }

    @Test
    void backendNamesListsTheSamplesBesideTcp() {
        List<String> names = Distributed.backendNames();
        assertTrue(names.containsAll(List.of("tcp", "traced", "unavailable-sample")), names.toString());
        assertEquals(names.size(), names.stream().distinct().count(), "a name twice: " + names);
    }

    @Test
    void providersAreFoundByNameOnlyAndSayWhetherTheyCanRun() {
        BackendProvider traced = BackendProvider.named("traced");
        assertTrue(traced.isAvailable());
        assertEquals(null, traced.unavailabilityCause());
        BackendProvider unavailable = BackendProvider.all().stream()
                .filter(p -> p.name().equals("unavailable-sample")).findFirst().orElseThrow();
        assertFalse(unavailable.isAvailable());
        Throwable unknown = assertThrows(IllegalArgumentException.class, () -> BackendProvider.named("mpi"));
        assertTrue(unknown.getMessage().contains("traced") && unknown.getMessage().contains("unavailable-sample"),
                unknown.getMessage());
    }
}
