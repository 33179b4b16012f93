package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A member whose set-up fails makes the others fail within seconds naming it and why (the failure key in the
 * store), long before the group's timeout; and set-up has a deadline of its own.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SetupFailureTest {
    /** An address of no host here (TEST-NET-3): listening on it fails at once. */
    private static final String FOREIGN = "203.0.113.7";
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Distributed.newVertx();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private static InitOptions.Builder member(HashStore store, int rank, int world) {
        return InitOptions.builder().vertx(vertx).store(store).rank(rank).worldSize(world)
                .timeout(Duration.ofMinutes(10)).environment(Map.of());
    }

    @Test
    void aMemberThatFailsSetUpFailsTheOthersNamingItAndItsCause() {
        HashStore store = new HashStore();
        long start = System.nanoTime();
        Future<ProcessGroup> healthy0 = Distributed.initProcessGroup(member(store, 0, 3).build());
        Future<ProcessGroup> healthy2 = Distributed.initProcessGroup(member(store, 2, 3).build());
        Future<ProcessGroup> broken = Distributed.initProcessGroup(member(store, 1, 3)
                .property("tcp.bindHost", FOREIGN).build());
        Throwable own = assertThrows(Exception.class, () -> broken.await(20, TimeUnit.SECONDS));
        for (Future<ProcessGroup> f : List.of(healthy0, healthy2)) {
            CommunicationException e = assertThrows(CommunicationException.class, () -> f.await(20, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains("set-up of group 'default' on rank ")
                    && e.getMessage().contains("failed: rank 1 (" + FOREIGN + ") failed: " + own.getMessage()),
                    e.getMessage());
            assertEquals("default", e.group());
        }
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "the group's timeout is 10 minutes");
    }

    @Test
    void setUpHasADeadlineShorterThanTheGroupsTimeout() {
        long start = System.nanoTime();
        Future<ProcessGroup> alone = Distributed.initProcessGroup(member(new HashStore(), 0, 2)
                .setupTimeout(Duration.ofSeconds(1)).build());
        CommunicationException e = assertThrows(CommunicationException.class, () -> alone.await(20, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("set-up of group 'default' timed out after PT1S on rank 0: ranks [1] never"
                + " connected"), e.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(8), "took " + (System.nanoTime() - start));
    }

    @Test
    void theSetUpDeadlineComesFromTheEnvironmentAndNeverPassesTheTimeout() {
        InitOptions fromEnv = InitOptions.builder().environment(Map.of(InitOptions.SETUP_TIMEOUT_ENV, "42")).build();
        assertEquals(Duration.ofSeconds(42), fromEnv.setupTimeout());
        assertEquals(InitOptions.DEFAULT_SETUP_TIMEOUT, InitOptions.builder().environment(Map.of()).build()
                .setupTimeout());
        assertEquals(Duration.ofSeconds(3), InitOptions.builder().environment(Map.of()).timeout(Duration.ofSeconds(3))
                .build().setupTimeout());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> InitOptions.builder()
                .environment(Map.of(InitOptions.SETUP_TIMEOUT_ENV, "soon")).build());
        assertEquals("TENSORBUS_SETUP_TIMEOUT='soon' must be a whole number of seconds above 0", bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> InitOptions.builder().setupTimeout(Duration.ZERO));
    }

    @Test
    void anRpcWorkerThatFailsToStartFailsTheOthersNamingIt() {
        HashStore store = new HashStore();
        long start = System.nanoTime();
        RpcOptions good = RpcOptions.builder().store(store).vertx(vertx).environment(Map.of()).build();
        Future<RpcAgent> healthy = Rpc.init("worker0", 0, 2, good);
        Future<RpcAgent> broken = Rpc.init("worker1", 1, 2, RpcOptions.builder().store(store).vertx(vertx)
                .environment(Map.of()).bindHost(FOREIGN).build());
        assertThrows(Exception.class, () -> broken.await(20, TimeUnit.SECONDS));
        CommunicationException e = assertThrows(CommunicationException.class,
                () -> healthy.await(20, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("set-up of the RPC agent on worker0 (rank 0, 127.0.0.1) failed: worker1"
                + " (rank 1, " + FOREIGN + ") failed: "), e.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }
}
