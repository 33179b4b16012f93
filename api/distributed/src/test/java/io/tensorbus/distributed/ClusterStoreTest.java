package io.tensorbus.distributed;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.test.fakecluster.FakeClusterManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ClusterStore}: the contract through two members of a Vert.x cluster (vertx-core's
 * {@link FakeClusterManager}, in this JVM), each with its own view of one store, and what is its own.
 */
class ClusterStoreTest extends StoreContractTest {

    private final List<Vertx> nodes = new ArrayList<>();

    /** A clustered Vert.x whose event bus listens on loopback only. */
    static Vertx clusteredVertx() throws Exception {
        VertxOptions options = new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1"));
        return await(Vertx.builder().with(options).withClusterManager(new FakeClusterManager()).buildClustered());
    }

    /** The two members of this test's cluster, started on first use. */
    private List<Vertx> nodes() throws Exception {
        while (nodes.size() < 2) {
            nodes.add(clusteredVertx());
        }
        return nodes;
    }

    @Override
    protected Views open(Duration timeout) throws Exception {
        String name = "test-" + UUID.randomUUID();
        ClusterStore first = await(ClusterStore.open(nodes().get(0), name, timeout));
        ClusterStore second = await(ClusterStore.open(nodes().get(1), name, timeout));
        return new Views(first, second);
    }

    /** Runs before the contract's own close (subclass first): closing twice is harmless. */
    @AfterEach
    void closeNodes() throws Exception {
        if (store != null) {
            other.close();
            store.close();
        }
        for (Vertx node : nodes) {
            node.close().await(10, TimeUnit.SECONDS);
        }
        nodes.clear();
    }

    @Test
    void bothViewsUseOneClusterMapNamedAfterTheStore() throws Exception {
        ClusterStore first = (ClusterStore) store;
        ClusterStore second = (ClusterStore) other;
        assertEquals(first.name(), second.name());
        assertEquals(ClusterStore.MAP_PREFIX + first.name(), first.mapName());
        assertTrue(nodes().get(0).isClustered() && nodes().get(1).isClustered());
    }

    @Test
    void aNonClusteredVertxIsRefusedSayingHowToMakeAClusteredOne() throws Exception {
        Vertx plain = Vertx.vertx();
        try {
            IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                    () -> ClusterStore.open(plain, "job", LONG));
            assertTrue(error.getMessage().contains("clustered Vert.x"), error.getMessage());
            assertTrue(error.getMessage().contains("buildClustered()"), error.getMessage());
        } finally {
            plain.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badArgumentsOfOpenAreRefused() throws Exception {
        Vertx node = nodes().get(0);
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> ClusterStore.open(node, "", LONG));
        assertTrue(empty.getMessage().contains("1 to 200 chars"), empty.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClusterStore.open(node, "   ", LONG));
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> ClusterStore.open(node, "x".repeat(201), LONG));
        assertTrue(tooLong.getMessage().contains("201 chars"), tooLong.getMessage());
        await(ClusterStore.open(node, "x".repeat(200), LONG)).close();
        assertThrows(NullPointerException.class, () -> ClusterStore.open(node, null, LONG));
        assertThrows(NullPointerException.class, () -> ClusterStore.open(null, "job", LONG));
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> ClusterStore.open(node, "job", Duration.ZERO));
        assertTrue(zero.getMessage().contains("positive"), zero.getMessage());
        assertEquals(Distributed.DEFAULT_TIMEOUT, await(ClusterStore.open(node, "job")).timeout());
    }

    @Test
    void closeFailsWaitingAndLaterCallsOfThatViewOnly() throws Exception {
        Future<byte[]> waiting = store.get("never");
        store.close();
        Throwable error = failure(waiting);
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("closed"), error.getMessage());
        assertInstanceOf(IllegalStateException.class, failure(store.set("k", bytes("v"))));
        assertInstanceOf(IllegalStateException.class, failure(store.check(List.of("k"))));
        assertInstanceOf(IllegalStateException.class, failure(store.add("k", 1)));
        store.close();
        await(other.set("k", bytes("still served")));
        assertEquals("still served", text(await(other.get("k"))));
    }

    @Test
    void viewsWithAnotherNameDoNotSeeTheKeys() throws Exception {
        await(store.set("mine", bytes("x")));
        ClusterStore elsewhere = await(ClusterStore.open(nodes().get(1), "other-" + UUID.randomUUID(), SHORT));
        try {
            assertFalse(await(elsewhere.check(List.of("mine"))));
            assertEquals(0L, await(elsewhere.numKeys()));
        } finally {
            elsewhere.close();
        }
    }

    @Test
    void clearRemovesTheKeysForEveryView() throws Exception {
        await(store.set("a", bytes("1")));
        await(store.add("b", 2));
        await(((ClusterStore) other).clear());
        assertEquals(0L, await(store.numKeys()));
        assertFalse(await(store.check(List.of("a"))));
    }

    @Test
    void aWaitOutlivesTheKeysBeingDeletedAndSetAgain() throws Exception {
        await(store.set("a", bytes("1")));
        await(store.deleteKey("a"));
        Future<Void> waiting = other.wait(List.of("a", "b"));
        await(store.set("b", bytes("2")));
        Thread.sleep(100);
        assertFalse(waiting.isComplete(), "'a' was deleted: the wait must go on");
        await(store.set("a", bytes("3")));
        await(waiting);
    }
}
