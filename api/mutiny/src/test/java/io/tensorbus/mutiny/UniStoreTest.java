package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.tensorbus.distributed.HashStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniStoreTest {
    private static final Duration LONG = Duration.ofSeconds(20);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyCallReachesTheStoreWhenSubscribed() {
        UniStore store = new UniStore(new HashStore(LONG));
        store.set("a", bytes("1")).await().atMost(LONG);
        assertArrayEquals(bytes("1"), store.get("a").await().atMost(LONG));
        assertEquals(5L, store.add("n", 5).await().atMost(LONG));
        assertArrayEquals(bytes("2"), store.compareSet("a", bytes("1"), bytes("2")).await().atMost(LONG));
        store.append("a", bytes("3")).await().atMost(LONG);
        store.multiSet(Map.of("b", bytes("x"), "c", bytes("y"))).await().atMost(LONG);
        List<byte[]> got = store.multiGet(List.of("a", "b", "c")).await().atMost(LONG);
        assertArrayEquals(bytes("23"), got.get(0));
        assertArrayEquals(bytes("y"), got.get(2));
        store.wait(List.of("a", "b")).await().atMost(LONG);
        assertTrue(store.check(List.of("a", "n")).await().atMost(LONG));
        assertEquals(4L, store.numKeys().await().atMost(LONG));
        assertTrue(store.deleteKey("b").await().atMost(LONG));
        assertFalse(store.check(List.of("b")).await().atMost(LONG));
    }

    @Test
    void nothingHappensUntilSubscription() {
        HashStore raw = new HashStore(LONG);
        UniStore store = new UniStore(raw);
        var set = store.set("k", bytes("v"));
        assertFalse(raw.check(List.of("k")).await());
        set.await().atMost(LONG);
        assertTrue(raw.check(List.of("k")).await());
    }

    @Test
    void theStoresTimeoutFailsTheUniWithTheStoresOwnException() {
        UniStore store = new UniStore(new HashStore(Duration.ofMillis(200)));
        Throwable failure = failureOf(store.get("missing"));
        assertTrue(failure instanceof TimeoutException, "expected the store's timeout, got " + failure);
        assertTrue(failure.getMessage().contains("'missing'"), failure.getMessage());
        assertTrue(failureOf(store.wait(List.of("x"), Duration.ofMillis(100))) instanceof TimeoutException);
    }

    private static Throwable failureOf(Uni<?> uni) {
        return uni.onItem().<Throwable>transform(item -> null).onFailure().recoverWithItem(e -> e).await()
                .atMost(LONG);
    }

    @Test
    void aCancelledGetDeliversNothingWhenItsKeyIsSetLater() throws InterruptedException {
        HashStore raw = new HashStore(LONG);
        UniStore store = new UniStore(raw);
        AtomicReference<Object> delivered = new AtomicReference<>();
        Cancellable subscription = store.get("late").subscribe().with(delivered::set, delivered::set);
        subscription.cancel();
        raw.set("late", bytes("v")).await();
        Thread.sleep(200);
        assertNull(delivered.get(), "a cancelled subscription received " + delivered.get());
        assertArrayEquals(bytes("v"), store.get("late").await().atMost(LONG));
    }

    @Test
    void aNullStoreIsRefused() {
        assertThrows(NullPointerException.class, () -> new UniStore(null));
    }
}
