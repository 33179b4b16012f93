package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every {@link Store} shares, PyTorch's semantics included. A concrete test provides two views of
 * one fresh store (the same object, two clients, two instances on one file...): what one view writes, the other
 * reads, so that these tests also check that the views share the data.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class StoreContractTest {

    /** Long enough never to fire in a passing test on a loaded machine. */
    static final Duration LONG = Duration.ofSeconds(20);
    /** For the tests that expect a timeout. */
    static final Duration SHORT = Duration.ofMillis(300);

    /** Two views of one fresh store, for instance a server and a client. */
    protected record Views(Store store, Store other) {
    }

    /** Opens a fresh store whose waits time out after {@code timeout}, and a second view of it. */
    protected abstract Views open(Duration timeout) throws Exception;

    /** Closes both views (the second first: it may depend on the first, as a client on its server). */
    protected void close(Views views) throws Exception {
        views.other().close();
        views.store().close();
    }

    protected Store store;
    protected Store other;
    private Views views;

    @BeforeEach
    void openViews() throws Exception {
        views = open(LONG);
        store = views.store();
        other = views.other();
    }

    @AfterEach
    void closeViews() throws Exception {
        close(views);
    }

    static <T> T await(Future<T> future) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    static Throwable failure(Future<?> future) throws Exception {
        try {
            future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        return fail("expected the future to fail, it succeeded");
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void setThenGetFromTheOtherView() throws Exception {
        await(store.set("a", bytes("1")));
        assertEquals("1", text(await(other.get("a"))));
        await(other.set("a", bytes("two")));
        assertEquals("two", text(await(store.get("a"))));
    }

    @Test
    void emptyAndBinaryValuesRoundTrip() throws Exception {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        await(store.set("binary", all));
        await(store.set("empty", new byte[0]));
        await(store.set("", bytes("empty key")));
        assertArrayEquals(all, await(other.get("binary")));
        assertArrayEquals(new byte[0], await(other.get("empty")));
        assertEquals("empty key", text(await(other.get(""))));
    }

    @Test
    void valuesAreCopied() throws Exception {
        byte[] value = bytes("abc");
        await(store.set("copied", value));
        value[0] = 'X';
        byte[] read = await(other.get("copied"));
        read[1] = 'Y';
        assertEquals("abc", text(await(store.get("copied"))));
    }

    @Test
    void getWaitsForALaterSetFromAnotherThread() throws Exception {
        Future<byte[]> pending = other.get("late");
        Thread.sleep(100);
        assertFalse(pending.isComplete(), "get must wait until the key is set");
        Thread setter = Thread.ofPlatform().start(() -> store.set("late", bytes("here")));
        assertEquals("here", text(await(pending)));
        setter.join(10_000);
    }

    @Test
    void getTimesOutNamingTheKey() throws Exception {
        Views quick = open(SHORT);
        try {
            Throwable error = failure(quick.other().get("never-set"));
            assertInstanceOf(TimeoutException.class, error);
            assertTrue(error.getMessage().contains("never-set"), error.getMessage());
            assertTrue(error.getMessage().contains("300 ms"), error.getMessage());
        } finally {
            close(quick);
        }
    }

    @Test
    void queuePushThenPopKeepsOrderAcrossViews() throws Exception {
        assertEquals(0L, await(store.queueLen("q")));
        await(store.queuePush("q", new byte[] {1}));
        await(other.queuePush("q", new byte[0]));
        await(store.queuePush("q", new byte[] {3, 3}));
        assertEquals(3L, await(other.queueLen("q")));
        assertArrayEquals(new byte[] {1}, await(other.queuePop("q")));
        assertArrayEquals(new byte[0], await(store.queuePop("q")));
        assertArrayEquals(new byte[] {3, 3}, await(other.queuePop("q")));
        assertEquals(0L, await(store.queueLen("q")));
    }

    @Test
    void queuePopWaitsForALaterPush() throws Exception {
        Future<byte[]> popped = other.queuePop("later");
        Thread.sleep(100);
        assertFalse(popped.isComplete(), "popped from an empty queue");
        await(store.queuePush("later", new byte[] {9}));
        assertArrayEquals(new byte[] {9}, await(popped));
    }

    @Test
    void concurrentPushesAndPopsLoseAndRepeatNothing() throws Exception {
        List<Future<Void>> pushes = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            // Equal values pushed at once from two views: a lost race must not pass for a won one.
            pushes.add((i % 2 == 0 ? store : other).queuePush("same", new byte[] {7}));
            pushes.add((i % 2 == 0 ? other : store).queuePush("distinct", new byte[] {(byte) i}));
        }
        await(Future.all(pushes));
        assertEquals(40L, await(store.queueLen("same")));
        List<Future<byte[]>> pops = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            pops.add((i % 2 == 0 ? store : other).queuePop("distinct"));
        }
        await(Future.all(pops));
        Set<Byte> got = new HashSet<>();
        for (Future<byte[]> f : pops) {
            got.add(f.result()[0]);
        }
        assertEquals(40, got.size(), "every value popped exactly once");
        assertEquals(0L, await(other.queueLen("distinct")));
    }

    @Test
    void queuePopTimesOutNamingTheKeyAndRefusesAKeyThatIsNoQueue() throws Exception {
        Views quick = open(SHORT);
        try {
            Throwable error = failure(quick.other().queuePop("empty-queue"));
            assertInstanceOf(TimeoutException.class, error);
            assertTrue(error.getMessage().contains("empty-queue"), error.getMessage());
        } finally {
            close(quick);
        }
        await(store.set("plain", new byte[] {1, 2, 3}));
        Throwable error = failure(other.queuePop("plain"));
        assertTrue(error.getMessage().contains("key 'plain' does not hold a queue"), error.getMessage());
    }

    @Test
    void setTimeoutShortensTheWaitOfLaterCalls() throws Exception {
        // Opened with the long timeout: a get of a missing key would wait 20 s before the change.
        other.setTimeout(SHORT);
        assertEquals(SHORT, other.timeout());
        long start = System.nanoTime();
        Throwable error = failure(other.get("never-set-either"));
        assertInstanceOf(TimeoutException.class, error);
        assertTrue(error.getMessage().contains("300 ms"), error.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "it waited for the old timeout");
        assertThrows(IllegalArgumentException.class, () -> other.setTimeout(Duration.ZERO));
        assertThrows(RuntimeException.class, () -> other.setTimeout(null));
        assertEquals(SHORT, other.timeout(), "a refused timeout changes nothing");
    }

    @Test
    void addCreatesACounterThatGetReadsAsDecimalText() throws Exception {
        assertEquals(5L, await(store.add("counter", 5)));
        assertEquals(3L, await(other.add("counter", -2)));
        assertEquals("3", text(await(store.get("counter"))));
        await(store.set("preset", bytes("40")));
        assertEquals(42L, await(other.add("preset", 2)));
        assertEquals(42L, await(other.add("preset", 0)));
    }

    @Test
    void addOnAValueThatIsNotACounterFailsNamingTheKey() throws Exception {
        await(store.set("word", bytes("abc")));
        Throwable error = failure(other.add("word", 1));
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("word"), error.getMessage());
    }

    @Test
    void compareSetOnAnAbsentKeyWithEmptyExpectedSetsIt() throws Exception {
        assertEquals("v1", text(await(store.compareSet("cas", new byte[0], bytes("v1")))));
        assertEquals("v1", text(await(other.get("cas"))));
    }

    @Test
    void compareSetOnAnAbsentKeyWithNonEmptyExpectedReturnsExpectedAndSetsNothing() throws Exception {
        assertEquals("guess", text(await(store.compareSet("absent", bytes("guess"), bytes("v")))));
        assertFalse(await(other.check(List.of("absent"))));
    }

    @Test
    void compareSetOnAPresentKeySetsOnlyWhenExpectedMatches() throws Exception {
        await(store.set("cas", bytes("old")));
        assertEquals("old", text(await(other.compareSet("cas", bytes("wrong"), bytes("new")))));
        assertEquals("old", text(await(store.get("cas"))));
        assertEquals("new", text(await(other.compareSet("cas", bytes("old"), bytes("new")))));
        assertEquals("new", text(await(store.get("cas"))));
    }

    @Test
    void waitCompletesOnceEveryKeyIsSet() throws Exception {
        Future<Void> waiting = other.wait(List.of("w1", "w2"), LONG);
        await(store.set("w1", bytes("x")));
        Thread.sleep(50);
        assertFalse(waiting.isComplete(), "wait must wait for every key");
        Thread.ofPlatform().start(() -> store.set("w2", bytes("y")));
        await(waiting);
        await(other.wait(List.of()));
    }

    @Test
    void waitTimesOutNamingTheMissingKey() throws Exception {
        await(store.set("present", bytes("x")));
        Throwable error = failure(other.wait(List.of("present", "missing-key"), SHORT));
        assertInstanceOf(TimeoutException.class, error);
        assertTrue(error.getMessage().contains("missing-key"), error.getMessage());
    }

    @Test
    void deleteKeyRemovesTheKey() throws Exception {
        await(store.set("doomed", bytes("x")));
        assertTrue(await(other.deleteKey("doomed")));
        assertFalse(await(store.check(List.of("doomed"))));
        assertFalse(await(other.deleteKey("doomed")));
    }

    @Test
    void numKeysCountsSetKeys() throws Exception {
        long before = await(store.numKeys());
        await(store.set("n1", bytes("x")));
        await(other.set("n2", bytes("y")));
        await(store.add("n3", 1));
        assertEquals(before + 3, await(other.numKeys()));
        await(store.deleteKey("n1"));
        assertEquals(before + 2, await(store.numKeys()));
    }

    @Test
    void checkTellsWhetherEveryKeyIsSetWithoutWaiting() throws Exception {
        assertFalse(await(store.check(List.of("c1"))));
        await(other.set("c1", bytes("x")));
        assertTrue(await(store.check(List.of("c1"))));
        assertFalse(await(store.check(List.of("c1", "c2"))));
        assertTrue(await(store.check(List.of())));
    }

    @Test
    void appendCreatesThenExtends() throws Exception {
        await(store.append("log", bytes("ab")));
        await(other.append("log", bytes("cd")));
        assertEquals("abcd", text(await(store.get("log"))));
    }

    @Test
    void concurrentAppendsFromTwoViewsKeepEveryPiece() throws Exception {
        List<Future<Void>> appends = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            appends.add((i % 2 == 0 ? store : other).append("pieces", bytes(i % 2 == 0 ? "a" : "b")));
        }
        for (Future<Void> f : appends) {
            await(f);
        }
        String all = text(await(store.get("pieces")));
        assertEquals(20, all.length(), all);
        assertEquals(10, all.chars().filter(c -> c == 'a').count(), all);
    }

    @Test
    void appendAfterTheKeyWasDeletedStartsAgain() throws Exception {
        await(store.append("gone", bytes("old")));
        await(other.deleteKey("gone"));
        await(store.append("gone", bytes("new")));
        assertEquals("new", text(await(other.get("gone"))));
    }

    @Test
    void multiSetThenMultiGetInOrder() throws Exception {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put("m1", bytes("one"));
        entries.put("m2", bytes("two"));
        await(store.multiSet(entries));
        List<byte[]> values = await(other.multiGet(List.of("m2", "m1")));
        assertEquals(List.of("two", "one"), values.stream().map(StoreContractTest::text).toList());
        assertTrue(await(other.multiGet(List.of())).isEmpty());
    }

    @Test
    void multiGetWaitsForEveryKey() throws Exception {
        await(store.set("g1", bytes("one")));
        Future<List<byte[]>> pending = other.multiGet(List.of("g1", "g2"));
        Thread.sleep(50);
        assertFalse(pending.isComplete());
        await(store.set("g2", bytes("two")));
        assertEquals(List.of("one", "two"), await(pending).stream().map(StoreContractTest::text).toList());
    }

    @Test
    void concurrentAddsFromSeveralThreadsSumExactly() throws Exception {
        int threads = 4;
        int addsEach = 50;
        List<Future<Long>> sums = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Store view = t % 2 == 0 ? store : other;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < addsEach; i++) {
                    sums.add(view.add("total", 1));
                }
            }));
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join(30_000);
        }
        Set<Long> seen = new HashSet<>();
        for (Future<Long> sum : sums) {
            seen.add(await(sum));
        }
        long expected = (long) threads * addsEach;
        assertEquals(expected, seen.size(), "every add must return a distinct running total");
        assertEquals(expected, seen.stream().mapToLong(Long::longValue).max().orElseThrow());
        assertEquals(Long.toString(expected), text(await(other.get("total"))));
    }

    @Test
    void badArgumentsAreRejectedWithAMessage() {
        NullPointerException nullKey = assertThrows(NullPointerException.class, () -> store.get(null));
        assertTrue(nullKey.getMessage().contains("key"), nullKey.getMessage());
        assertThrows(NullPointerException.class, () -> store.set("k", null));
        assertThrows(NullPointerException.class, () -> store.wait(null, LONG));
        assertThrows(NullPointerException.class, () -> store.check(Arrays.asList("a", null)));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> store.wait(List.of("k"), Duration.ofMillis(-1)));
        assertTrue(negative.getMessage().contains("positive"), negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.wait(List.of("k"), Duration.ZERO));
        Map<String, byte[]> nullValue = new HashMap<>();
        nullValue.put("k", null);
        assertThrows(NullPointerException.class, () -> store.multiSet(nullValue));
    }

    @Test
    void timeoutIsTheOneGiven() {
        assertEquals(LONG, store.timeout());
        assertEquals(LONG, other.timeout());
    }
}
