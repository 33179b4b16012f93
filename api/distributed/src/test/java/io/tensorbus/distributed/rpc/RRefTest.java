package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.io.ObjectCodec;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Remote references between three workers in one JVM: creation, sharing, proxies, release, lost messages. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RRefTest {
    /** A remote object with state, for the typed proxies. */
    public interface Counter {
        int add(int n);

        default String name() {
            return "counter";
        }
    }

    /** An interface the counter does not implement. */
    public interface Other {
        int add(int n);
    }

    static final class CounterImpl implements Counter {
        private int total;

        @Override
        public synchronized int add(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("negative " + n);
            }
            total += n;
            return total;
        }
    }

    private final RpcWorkers workers = new RpcWorkers();
    private List<RpcAgent> agents;
    /** RRefs a worker keeps between calls, by name ("test.keep" / "test.release"). */
    private final Map<String, RRef<?>> kept = new ConcurrentHashMap<>();
    private final RpcRegistry registry = new RpcRegistry()
            .register("test.counter", args -> new CounterImpl())
            .register("test.fail", args -> {
                throw new IllegalStateException("boom");
            })
            .register("test.fetchPlusOne", args -> {
                try (RRef<Tensor> r = rref(args.get(0))) {
                    return r.toHere().add(1);
                }
            })
            // A function that stores an argument RRef keeps it; the call's end releases the others.
            .register("test.keep", args -> kept.put((String) args.get(0), rref(args.get(1)).keep()) == null)
            .register("test.fetchSum", args -> RRefTest.<Tensor>rref(args.get(0)).toHere().sum().item())
            .register("test.fetchKept", args -> kept.get((String) args.get(0)).toHere())
            .register("test.release", args -> {
                kept.remove((String) args.get(0)).close();
                return true;
            })
            .register("test.ownerView", args -> {
                try (RRef<Object> r = rref(args.get(0))) {
                    return List.of(r.isOwner(), r.confirmedByOwner(), r.localValue());
                }
            })
            .register("test.share", args -> RRef.of(RpcAgent.current(), args.get(0)));

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }

    @BeforeEach
    void setUp() throws Exception {
        agents = workers.start(3, r -> RpcOptions.builder().registry(registry).timeout(Duration.ofSeconds(20))
                .initTimeout(Duration.ofSeconds(20)).maxMessageBytes(32 << 20)).all();
    }

    @AfterEach
    void tearDown() throws Exception {
        workers.close();
    }

    private RpcAgent w(int rank) {
        return workers.get(rank);
    }

    private long info(int rank, String key) {
        return workers.info(rank, key);
    }

    private void ownerTablesEmptyEventually() throws InterruptedException {
        workers.ownerTablesEmptyEventually(false);
    }

    private void ownerTablesEmptyEventually(boolean collect) throws InterruptedException {
        workers.ownerTablesEmptyEventually(collect);
    }

    @Test
    void anArgumentRRefIsReleasedWhenTheCallReturnsSoAChainOfThreeLeaksNothing() throws Exception {
        // The RPC tutorial's pattern: worker0 makes a value on worker1 and hands its RRef to worker2, whose function
        // fetches it and never closes it.
        try (RRef<Tensor> r = w(0).remote("worker1", "builtin.add", Tensor.ones(4), 1.0)) {
            assertEquals(8.0, (Double) w(0).rpcSync("worker2", "test.fetchSum", r), 1e-9);
            assertEquals(8.0, (Double) w(0).rpcSync("worker0", "test.fetchSum", r), 1e-9, "a call to itself too");
        }
        ownerTablesEmptyEventually();
        for (int rank = 0; rank < 3; rank++) {
            assertEquals(0, info(rank, "num_user_rrefs"), "worker" + rank + " holds no reference");
        }
        for (RpcAgent a : agents) {
            a.shutdown(true);
        }
        for (RpcAgent a : agents) {
            RpcWorkers.eventually(a::isClosed, a + " closed");
            assertEquals(List.of(), a.rrefLeaks(), a + " reports no leak");
        }
    }

    @Test
    void remoteThenToHereFetchesTheOwnersValueAndClosingDropsIt() throws Exception {
        RRef<Tensor> r = w(0).remote("worker1", "builtin.add", Tensor.ones(2), 1.0);
        assertEquals("worker1", r.owner().name());
        assertFalse(r.isOwner());
        assertEquals(0, r.id().createdOn());
        assertArrayEquals(new float[] {2, 2}, r.toHere().toFloatArray());
        RpcWorkers.eventually(r::confirmedByOwner, "the owner confirms the creation");
        assertEquals(1, info(1, "num_owner_rrefs"));
        assertEquals(1, info(0, "num_user_rrefs"));
        r.close();
        r.close();
        ownerTablesEmptyEventually();
        assertThrows(IllegalStateException.class, r::toHere, "a closed reference");
    }

    @Test
    void anRRefSharedWithAThirdWorkerKeepsTheValueUntilEveryUserReleasedIt() throws Exception {
        RRef<Tensor> r = w(0).remote("worker1", "builtin.mul", Tensor.ones(3), 4.0);
        assertEquals(true, w(0).rpcSync("worker2", "test.keep", "k", r));
        r.close();
        Thread.sleep(200);
        assertEquals(1, info(1, "num_owner_rrefs"), "worker2 still holds it");
        Tensor seen = w(0).rpcSync("worker2", "test.fetchKept", "k");
        assertArrayEquals(new float[] {4, 4, 4}, seen.toFloatArray());
        Tensor plusOne = w(2).rpcSync("worker0", "test.fetchPlusOne", kept.get("k"));
        assertArrayEquals(new float[] {5, 5, 5}, plusOne.toFloatArray(), "passed on again, by a user");
        w(0).rpcSync("worker2", "test.release", "k");
        ownerTablesEmptyEventually();
    }

    @Test
    void anRRefSentBackToItsOwnerIsTheOwnersOwnHandle() throws Exception {
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 40, 2);
        List<Object> view = w(0).rpcSync("worker1", "test.ownerView", r);
        assertEquals(List.of(true, true, 42L), view);
        r.close();
        ownerTablesEmptyEventually();
    }

    @Test
    void rrefOfALocalValueIsOwnedHereAndOthersFetchCopies() throws Exception {
        Tensor value = Tensor.ones(2);
        RRef<Tensor> mine = RRef.of(w(0), value);
        assertTrue(mine.isOwner());
        assertTrue(mine.confirmedByOwner());
        assertNull(mine.forkId());
        assertSame(value, mine.localValue());
        assertSame(value, mine.toHere(), "on the owner, the value itself");
        Tensor remote = w(0).rpcSync("worker2", "test.fetchPlusOne", mine);
        assertArrayEquals(new float[] {2, 2}, remote.toFloatArray());
        RRef<String> theirs = w(0).rpcSync("worker1", "test.share", "hello");
        assertEquals("worker1", theirs.owner().name(), "an RRef returned by a call");
        assertEquals("hello", theirs.toHere());
        assertThrows(IllegalStateException.class, theirs::localValue);
        mine.close();
        theirs.close();
        // The handle test.share made on worker1 was dropped there without close: the GC releases it.
        ownerTablesEmptyEventually(true);
    }

    @Test
    void remoteOnItselfOwnsTheResultHere() throws Exception {
        RRef<Long> r = w(1).remote("worker1", "builtin.mul", 6, 7);
        assertTrue(r.isOwner());
        assertEquals(42L, r.localValue());
        r.close();
        ownerTablesEmptyEventually();
    }

    @Test
    void aFailedOrUnknownFunctionFailsToHereWithTheRemoteException() throws Exception {
        RRef<Object> failed = w(0).remote("worker1", "test.fail");
        RemoteException e = assertThrows(RemoteException.class, failed::toHere);
        assertEquals(IllegalStateException.class.getName(), e.remoteType());
        assertEquals("boom", e.remoteMessage());
        assertEquals("worker1", e.worker());
        RRef<Object> unknown = w(0).remote(2, "test.nothing");
        RemoteException u = assertThrows(RemoteException.class, unknown::toHere);
        assertTrue(u.getMessage().contains("no function 'test.nothing'"), u.getMessage());
        failed.close();
        unknown.close();
        ownerTablesEmptyEventually();
        assertThrows(IllegalArgumentException.class, () -> w(0).remote("worker9", "builtin.add", 1, 2));
        assertThrows(IllegalArgumentException.class, () -> w(0).remote("worker1", "bad name", 1));
    }

    @Test
    void typedProxiesCallMethodsOfTheRemoteObject() throws Exception {
        RRef<Counter> c = w(0).remote("worker1", "test.counter");
        Counter proxy = c.rpcSync(Counter.class);
        assertEquals(5, proxy.add(5));
        assertEquals(7, proxy.add(2));
        assertEquals("counter", proxy.name(), "a default method runs on the owner too");
        assertEquals(8, c.rpcAsync(Counter.class, x -> x.add(1)).await(10, TimeUnit.SECONDS));
        try (RRef<Integer> total = c.remote(Counter.class, x -> x.add(2))) {
            assertEquals("worker1", total.owner().name());
            assertEquals(10, total.toHere());
        }
        RemoteException thrown = assertThrows(RemoteException.class, () -> proxy.add(-1));
        assertEquals(IllegalArgumentException.class.getName(), thrown.remoteType());
        assertEquals("negative -1", thrown.remoteMessage());
        RemoteException other = assertThrows(RemoteException.class, () -> c.rpcSync(Other.class).add(1));
        assertTrue(other.remoteMessage().contains("does not implement " + Other.class.getName()),
                other.remoteMessage());
        assertThrows(IllegalArgumentException.class, () -> c.rpcSync(CounterImpl.class), "not an interface");
        assertThrows(IllegalArgumentException.class, () -> c.rpcAsync(Counter.class, x -> x.add(1) + x.add(2)));
        assertThrows(IllegalArgumentException.class, () -> c.rpcAsync(Counter.class, x -> 3));
        c.close();
        ownerTablesEmptyEventually();
    }

    @Test
    void lostControlMessagesAndLostAcknowledgementsAreRetriedAndAppliedOnce() throws Exception {
        for (RpcAgent a : agents) {
            a.rrefs().control().tryTimeout = Duration.ofMillis(200);
        }
        AtomicInteger acceptsLost = new AtomicInteger();
        AtomicInteger deleteAcksLost = new AtomicInteger();
        w(2).rrefs().control().loseRequest = (f, a) -> f.equals(RRefOwnerTable.ACCEPT)
                && acceptsLost.getAndIncrement() < 2;
        w(1).rrefs().owned().loseAck = (f, a) -> f.equals(RRefOwnerTable.DELETE)
                && deleteAcksLost.getAndIncrement() < 1;
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 1, 1);
        w(0).rpcSync("worker2", "test.keep", "k", r);
        r.close();
        assertEquals(2L, (Long) w(0).rpcSync("worker2", "test.fetchKept", "k"));
        w(0).rpcSync("worker2", "test.release", "k");
        ownerTablesEmptyEventually();
        assertEquals(3, acceptsLost.get(), "two ACCEPTs lost, the third arrived");
        assertTrue(deleteAcksLost.get() >= 2, "the first DELETE's acknowledgement was lost, and it was sent again");
        assertTrue(info(2, "num_rref_message_retries") >= 2, w(2).debugInfo().toString());
        assertTrue(info(1, "num_rref_messages_repeated") >= 1, "the repeated DELETE changed nothing: "
                + w(1).debugInfo());
    }

    @Test
    void theSenderOfAnRRefStaysUntilTheReceiverSaysItsForkWasAccepted() throws Exception {
        for (RpcAgent a : agents) {
            a.rrefs().control().tryTimeout = Duration.ofMillis(200);
        }
        AtomicBoolean holdChildAccepts = new AtomicBoolean(true);
        w(2).rrefs().control().loseRequest = (f, a) -> f.equals(RRefOwnerTable.CHILD_ACCEPT) && holdChildAccepts.get();
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 1, 2);
        w(0).rpcSync("worker2", "test.keep", "k", r);
        r.close();
        w(0).rpcSync("worker2", "test.release", "k");
        Thread.sleep(300);
        assertEquals(1, info(1, "num_owner_rrefs"), "worker0's DELETE waits for worker2's CHILD_ACCEPT");
        assertEquals(1, info(0, "num_user_rrefs"));
        holdChildAccepts.set(false);
        ownerTablesEmptyEventually();
        assertTrue(info(2, "num_rref_message_retries") >= 1, w(2).debugInfo().toString());
    }

    @Test
    void anRRefCollectedWithoutCloseIsReleased() throws Exception {
        w(0).remote("worker1", "builtin.add", 3, 4).toHereAsync().await(10, TimeUnit.SECONDS);
        ownerTablesEmptyEventually(true);
    }

    @Test
    void gracefulShutdownReportsRRefsNeverReleased() throws Exception {
        RRef<Long> leaked = w(0).remote("worker1", "builtin.add", 5, 5);
        assertEquals(10L, leaked.toHere());
        List<Future<Void>> down = agents.stream().map(a -> a.shutdown(true)).toList();
        Future.all(down).await(30, TimeUnit.SECONDS);
        String owner = String.join("\n", w(1).rrefLeaks());
        assertTrue(owner.contains(leaked.id() + " owned by worker1 was never released: user forks ["
                + leaked.forkId() + "]"), owner);
        String user = String.join("\n", w(0).rrefLeaks());
        assertTrue(user.contains("worker0 never released " + leaked.forkId()), user);
        assertEquals(List.of(), w(2).rrefLeaks());
        assertInstanceOf(RRef.class, leaked);
    }

    @Test
    void anRRefInAMessageThatIsNeverSentDoesNotKeepTheValueAlive() throws Exception {
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 1, 1);
        assertEquals(2L, r.toHere());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> w(0).rpcSync("worker2", "builtin.echo", r, new Object()));
        assertTrue(e.getMessage().contains("java.lang.Object"), e.getMessage());
        Tensor tooBig = Tensor.ones(1 << 24);
        RpcException big = assertThrows(RpcException.class, () -> w(0).rpcSync("worker2", "builtin.echo",
                List.of(r), tooBig));
        assertTrue(big.getMessage().contains("maxMessageBytes"), big.getMessage());
        r.close();
        ownerTablesEmptyEventually();
    }

    @Test
    void badUseIsRefusedWithAReason() throws Exception {
        RRef<Long> r = RRef.of(w(0), 1L);
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
                () -> ObjectCodec.standard().encode(r));
        assertTrue(outside.getMessage().contains("RPC"), outside.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RpcRegistry().register("tensorbus.rref.fetch",
                args -> 1));
        assertThrows(IllegalArgumentException.class, () -> r.toHere(Duration.ZERO));
        r.close();
        IllegalArgumentException closed = assertThrows(IllegalArgumentException.class,
                () -> w(0).rpcSync("worker1", "builtin.echo", r));
        assertTrue(closed.getMessage().contains("is closed and cannot be sent"), closed.getMessage());
        RRef<Long> other = RRef.of(w(1), 2L);
        assertThrows(IllegalArgumentException.class, () -> w(0).rpcSync("worker2", "builtin.echo", other),
                "an RRef of another agent");
        other.close();
        ownerTablesEmptyEventually();
    }
}
