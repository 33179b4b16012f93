package io.tensorbus.distributed;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link HashStore}: the contract with one instance used from several threads, and what is its own. */
class HashStoreTest extends StoreContractTest {

    @Override
    protected Views open(Duration timeout) {
        HashStore store = new HashStore(timeout);
        return new Views(store, store);
    }

    @Test
    void defaultTimeoutIsThirtyMinutesAsPyTorch() {
        try (HashStore store = new HashStore()) {
            assertEquals(Duration.ofMinutes(30), store.timeout());
        }
    }

    @Test
    void constructorRejectsTimeoutsThatAreNotPositive() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> new HashStore(Duration.ZERO));
        assertTrue(zero.getMessage().contains("positive"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new HashStore(Duration.ofSeconds(-1)));
        assertThrows(NullPointerException.class, () -> new HashStore(null));
    }

    @Test
    void closeFailsWaitingAndLaterCalls() throws Exception {
        HashStore store = new HashStore(LONG);
        Future<byte[]> waiting = store.get("never");
        store.close();
        Throwable error = failure(waiting);
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("closed"), error.getMessage());
        assertInstanceOf(IllegalStateException.class, failure(store.set("k", bytes("v"))));
        assertInstanceOf(IllegalStateException.class, failure(store.check(List.of("k"))));
        store.close();
    }

    @Test
    void aKeyDeletedWhileOthersAreAwaitedIsAwaitedAgain() throws Exception {
        HashStore store = new HashStore(LONG);
        await(store.set("a", bytes("1")));
        Future<Void> waiting = store.wait(List.of("a", "b"));
        await(store.deleteKey("a"));
        await(store.set("b", bytes("2")));
        Thread.sleep(50);
        assertTrue(!waiting.isComplete(), "'a' was deleted: the wait must go on");
        await(store.set("a", bytes("3")));
        await(waiting);
        store.close();
    }
}
