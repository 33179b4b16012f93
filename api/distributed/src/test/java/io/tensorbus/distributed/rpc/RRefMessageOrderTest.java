package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.io.ObjectCodec;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RRef protocol's messages overtaking one another: calls, forks, fetches and releases that reach an owner
 * before the creation of their value (stuck behind a 64 MiB message) keep the value exactly as long as some
 * reference exists, and the owner's records do not grow. Each test not marked "coverage" once failed because
 * of the bug its Javadoc names. Four workers in one JVM: in the ordering tests worker0 (A) calls
 * {@code remote} on worker1 (O, the owner), and passes the reference to worker2 (B) and worker3 (C).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RRefMessageOrderTest {
    private static final int WORLD = 4;
    /** Elements of the float tensor that makes a creation message slow to arrive (64 MiB). */
    private static final int BIG = 16 << 20;

    /** A record that carries an RRef nested inside it. */
    public record Holder(String name, RRef<?> ref) {
    }

    /** A remote object for the typed proxies. */
    public interface Sized {
        long size();
    }

    record SizedImpl(long size) implements Sized {
    }

    private final RpcWorkers workers = new RpcWorkers();
    private List<RpcAgent> agents;
    private final Map<String, RRef<?>> kept = new ConcurrentHashMap<>();
    private final RpcRegistry registry = new RpcRegistry()
            .register("review.keep", args -> kept.put((String) args.get(0), rref(args.get(1)).keep()) == null)
            .register("review.keepAll", args -> {
                // [prefix, values...]: keeps every RRef found in the values (lists, maps, records)
                String prefix = (String) args.get(0);
                int n = 0;
                for (Object o : args.subList(1, args.size())) {
                    for (RRef<?> r : found(o)) {
                        kept.put(prefix + n++, r.keep());
                    }
                }
                return n;
            })
            .register("review.fetchKept", args -> kept.get((String) args.get(0)).toHere(Duration.ofSeconds(3)))
            .register("review.release", args -> {
                kept.remove((String) args.get(0)).close();
                return true;
            })
            .register("review.closeIt", args -> {
                rref(args.get(0)).close();
                return true;
            })
            .register("review.size", args -> (long) ((Tensor) args.get(0)).numel())
            .register("review.sized", args -> new SizedImpl(((Tensor) args.get(0)).numel()))
            // [rref]: a proxy call of Sized.size() on the owner.
            .register("review.proxySize", args -> {
                try (RRef<Sized> r = rref(args.get(0))) {
                    return r.rpcSync(Sized.class).size();
                }
            })
            // [millis, key]: after that long, a reference to a value of this worker, kept here and returned.
            .register("review.slowShare", args -> {
                Thread.sleep(((Number) args.get(0)).longValue());
                RRef<String> r = RRef.of(RpcAgent.current(), "shared");
                kept.put((String) args.get(1), r);
                return r;
            })
            .register("review.slow", args -> {
                Thread.sleep(((Number) args.get(0)).longValue());
                return args.get(1);
            })
            // [rref, to, keyHere, keyThere]: keeps the reference here and passes it on to `to`, which keeps it.
            .register("review.forward", args -> {
                RRef<Object> r = rref(args.get(0));
                kept.put((String) args.get(2), r);
                return RpcAgent.current().rpcSync((String) args.get(1), "review.keep", args.get(3), r);
            })
            // [rref]: sends the reference to its owner, which answers isOwner().
            .register("review.sendToOwner", args -> {
                RRef<Object> r = rref(args.get(0));
                try (r) {
                    return RpcAgent.current().rpcSync(r.owner().name(), "review.isOwner", r);
                }
            })
            .register("review.isOwner", args -> {
                try (RRef<Object> r = rref(args.get(0))) {
                    return r.isOwner();
                }
            })
            // [rref, millis]: on the owner, toHereAsync with that timeout; what happened within 2 s.
            .register("review.ownerToHereWithin", args -> {
                try (RRef<Object> r = rref(args.get(0))) {
                    Future<Object> f = r.toHereAsync(Duration.ofMillis(((Number) args.get(1)).longValue()));
                    try {
                        f.toCompletionStage().toCompletableFuture().get(2, TimeUnit.SECONDS);
                        return "value";
                    } catch (TimeoutException e) {
                        return "still pending after 2 s";
                    } catch (ExecutionException e) {
                        return "failed: " + e.getCause().getClass().getSimpleName();
                    }
                }
            });

    @SuppressWarnings("unchecked")
    private static <T> RRef<T> rref(Object o) {
        return (RRef<T>) o;
    }

    private static List<RRef<?>> found(Object o) {
        List<RRef<?>> out = new ArrayList<>();
        if (o instanceof RRef<?> r) {
            out.add(r);
        } else if (o instanceof List<?> l) {
            l.forEach(x -> out.addAll(found(x)));
        } else if (o instanceof Map<?, ?> m) {
            m.values().forEach(x -> out.addAll(found(x)));
        } else if (o instanceof Holder h) {
            out.addAll(found(h.ref()));
        }
        return out;
    }

    @BeforeEach
    void setUp() throws Exception {
        ObjectCodec codec = new ObjectCodec().register("review.Holder", Holder.class);
        agents = workers.start(WORLD, r -> RpcOptions.builder().registry(registry).codec(codec)
                .timeout(Duration.ofSeconds(20)).initTimeout(Duration.ofSeconds(20)).maxMessageBytes(256 << 20))
                .all();
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

    private void controlMessagesSettle() throws InterruptedException {
        workers.controlMessagesSettle();
    }

    private void ownerTablesEmptyEventually() throws InterruptedException {
        workers.ownerTablesEmptyEventually(false);
    }

    private static boolean gcNow() {
        System.gc();
        return true;
    }

    private static void eventually(BooleanSupplier condition, String what)
            throws InterruptedException {
        RpcWorkers.eventually(condition, what);
    }

    private void warm(int from, int to) {
        assertEquals(1, (Integer) w(from).rpcSync("worker" + to, "builtin.echo", 1));
    }

    // ---- bug 1: an owner's RRef closed while the call carrying it has not yet been handed to its connection

    /**
     * Was a bug: the owner records the child fork of its own reference only at commit (after the frame is handed
     * to the connection, asynchronously); closing the owner's handle right after {@code rpcAsync} returns
     * drops the value although the message carrying the reference is on its way.
     */
    @Test
    void anOwnersRRefClosedRightAfterAnAsyncCallCarryingItKeepsTheValue() throws Exception {
        RRef<Long> mine = RRef.of(w(0), 7L);
        Future<Boolean> sent = w(0).rpcAsync("worker2", "review.keep", "k", mine);
        mine.close(); // RRef#close: "Calls already made with it still complete."
        assertEquals(true, sent.await(10, TimeUnit.SECONDS));
        controlMessagesSettle();
        assertEquals(7L, (Long) w(0).rpcSync("worker2", "review.fetchKept", "k"), "worker2 fetches what it holds");
        assertEquals(1, info(0, "num_owner_rrefs"), "worker2 holds a reference: " + w(0).rrefs().leaks());
        w(0).rpcSync("worker2", "review.release", "k");
        ownerTablesEmptyEventually();
    }

    // ---- bug 2: FORK / ACCEPT / DELETE / an RRef that reach the owner before the CREATE are dropped

    /**
     * Was a bug: a reference that reaches its owner before the owner has applied the creation (the creation
     * carries a large argument; the reference travels A -> B -> O on small messages) cannot be decoded:
     * {@code RRefOwnerTable.arrived} throws, and the owner refuses (closes) B's whole connection.
     */
    @Test
    void anRRefThatReachesItsOwnerBeforeItsCreationIsAccepted() throws Exception {
        warm(0, 2);
        warm(2, 1);
        RRef<Long> r = w(0).remote("worker1", "review.size", Tensor.ones(BIG));
        Boolean isOwner = w(0).rpcSync("worker2", "review.sendToOwner", r);
        assertEquals(true, isOwner);
        assertEquals((long) BIG, r.toHere());
        r.close();
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug (premature delete): the owner ignores FORK and ACCEPT of a value it has not created yet (no entry:
     * {@code RRefOwnerTable.control} changes nothing). A -> B -> C while A's creation message is still on
     * its way: C's fork is never recorded, and once A and B release theirs the owner drops the value that C
     * still holds; C's {@code toHere} then waits for a value that will never come (the fetch even makes a
     * new, never-created entry).
     */
    @Test
    void aForkMadeBeforeTheOwnerAppliedTheCreationKeepsTheValue() throws Exception {
        warm(0, 2);
        warm(2, 3);
        warm(2, 1);
        warm(3, 1);
        RRef<Long> r = w(0).remote("worker1", "review.size", Tensor.ones(BIG));
        assertEquals(true, w(0).rpcSync("worker2", "review.forward", r, "worker3", "b", "c"));
        eventually(r::confirmedByOwner, "the creation is acknowledged");
        controlMessagesSettle();
        w(0).rpcSync("worker2", "review.release", "b");
        r.close();
        controlMessagesSettle();
        Thread.sleep(200);
        assertEquals((long) BIG, (Long) w(0).rpcSync("worker3", "review.fetchKept", "c"), "worker3 fetches what it"
                + " holds");
        assertEquals(1, info(1, "num_owner_rrefs"), "worker3 still holds a reference: " + w(1).rrefs().leaks()
                + " " + w(1).debugInfo());
        w(0).rpcSync("worker3", "review.release", "c");
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug (leak): B receives the reference and releases it before the owner applied A's creation: B's
     * ACCEPT and DELETE find no entry and are ignored (the DELETE is not remembered), then A's FORK of B's
     * fork arrives after the creation and adds it for good: the value is never released.
     */
    @Test
    void aForkReleasedBeforeTheOwnerAppliedTheCreationDoesNotLeak() throws Exception {
        warm(0, 2);
        warm(2, 1);
        RRef<Long> r = w(0).remote("worker1", "review.size", Tensor.ones(BIG));
        assertEquals(true, w(0).rpcSync("worker2", "review.closeIt", r));
        assertEquals((long) BIG, r.toHere());
        r.close();
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug: as above for a proxy call: {@code RRefOwnerTable.invoke} fails at once ("is not owned") when the
     * INVOKE overtakes the creation, where {@code fetch} waits for it.
     */
    @Test
    void aProxyCallThatReachesTheOwnerBeforeTheCreationWaitsForIt() throws Exception {
        warm(0, 2);
        warm(2, 1);
        RRef<Sized> r = w(0).remote("worker1", "review.sized", Tensor.ones(BIG));
        assertEquals((long) BIG, (Long) w(0).rpcSync("worker2", "review.proxySize", r));
        r.close();
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug (leak): a result that carries an RRef and is answered on a connection the caller has already
     * closed is silently not sent ({@code RpcIncoming.send} drops it when closed), but
     * {@code RpcServe.answer} commits its forks anyway: the owner keeps a fork nobody will ever delete (the
     * design says forks of a message that never leaves are dropped).
     */
    @Test
    void aResultCarryingAnRRefThatIsNeverSentDoesNotKeepTheValue() throws Exception {
        Future<Object> call = w(0).rpcAsync(w(1).self(), Duration.ofSeconds(10), "review.slowShare", 800, "s");
        Thread.sleep(200);
        w(0).shutdown(false).await(10, TimeUnit.SECONDS); // the caller goes away while the function runs
        assertTrue(call.failed());
        eventually(() -> kept.containsKey("s"), "the function returned");
        Thread.sleep(500);
        kept.remove("s").close(); // the owner's own handle; the result never left
        eventually(() -> info(1, "num_owner_rrefs") == 0, "worker1 dropped the value: " + w(1).rrefs().leaks());
    }

    // ---- bug 3: any peer can grow the owner table without bound (and a late fetch leaves an entry behind)

    /**
     * Was a bug: {@code tensorbus.rref.fetch} of an id that was never created makes an owner entry (waiting for a
     * creation) that nothing ever removes, not even after the fetch timed out: a peer (or a fetch whose
     * creation never arrives) grows the owner table for good.
     */
    @Test
    void fetchesOfUnknownIdsDoNotGrowTheOwnerTable() throws Exception {
        List<Future<Object>> fetches = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            fetches.add(w(0).rpcAsync(w(1).self(), Duration.ofMillis(300), RRefOwnerTable.FETCH,
                    new RRefId(0, 1_000_000 + i), 300L));
        }
        for (Future<Object> f : fetches) {
            assertThrows(RpcTimeoutException.class, () -> Await.get(f));
        }
        Thread.sleep(200);
        assertEquals(0, info(1, "num_owner_rrefs"), "entries left behind: " + w(1).rrefs().leaks().size());
    }

    /**
     * Was a bug (unbounded memory): the owner remembers every fork ever deleted for as long as the value lives
     * ({@code OwnerRRef}'s fork sets); a long-lived value (a parameter server's model) passed on at every step keeps
     * one ForkId per step forever.
     */
    @Test
    void passingALongLivedRRefManyTimesDoesNotGrowItsOwnersRecord() throws Exception {
        RRef<Long> model = RRef.of(w(0), 1L);
        int passes = 300;
        for (int i = 0; i < passes; i++) {
            assertEquals(true, w(0).rpcSync("worker1", "review.closeIt", model));
        }
        controlMessagesSettle();
        OwnerRRef e = w(0).rrefs().owned().get(model.id());
        int remembered = 0;
        for (String name : List.of("forks", "passedOn")) {
            Field f = OwnerRRef.class.getDeclaredField(name);
            f.setAccessible(true);
            remembered += ((Set<?>) f.get(e)).size();
        }
        model.close();
        ownerTablesEmptyEventually();
        assertTrue(remembered < 10, "the owner still remembers " + remembered + " deleted forks of a value passed "
                + passes + " times, all of them released and acknowledged");
    }

    // ---- API: javadoc claims that do not hold

    /**
     * Was a bug (API): {@code localValue()} / {@code toHere()} document an IllegalStateException on a closed
     * reference; on the owner a closed handle still answers the value while other users keep it alive.
     */
    @Test
    void aClosedOwnerHandleRefusesLocalValueAsDocumented() throws Exception {
        RRef<Long> mine = RRef.of(w(0), 5L);
        assertEquals(true, w(0).rpcSync("worker2", "review.keep", "k", mine));
        mine.close();
        assertThrows(IllegalStateException.class, mine::localValue, "localValue of a closed reference");
        assertThrows(IllegalStateException.class, mine::toHereAsync, "toHereAsync of a closed reference");
        w(0).rpcSync("worker2", "review.release", "k");
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug (API): {@code remote(to, timeout, ...)} documents {@code timeout} as "how long the owner may take
     * to acknowledge the creation", and so it is for another worker; for {@code remote} to itself it bounds
     * the function instead, and the value fails with RpcTimeoutException while the function still runs.
     */
    @Test
    void remoteToItselfUsesTheTimeoutAsRemoteToAnotherWorkerDoes() throws Exception {
        Duration t = Duration.ofMillis(300);
        try (RRef<Integer> other = w(0).remote(w(1).self(), t, "review.slow", 800, 1)) {
            assertEquals(1, other.toHere(), "remote to another worker: the function may take longer");
        }
        try (RRef<Integer> self = w(1).remote(w(1).self(), t, "review.slow", 800, 1)) {
            assertEquals(1, self.localValue(), "remote to itself: the same");
        }
        ownerTablesEmptyEventually();
    }

    /**
     * Was a bug (API): {@code toHereAsync(timeout)} "fails ... as a call does" (RpcTimeoutException after the
     * timeout); on the owner it ignores the timeout and waits for the value however long it takes.
     */
    @Test
    void toHereAsyncOnTheOwnerHonoursItsTimeout() throws Exception {
        RRef<Integer> r = w(0).remote("worker1", "review.slow", 4000, 1);
        String outcome = w(0).rpcSync("worker1", "review.ownerToHereWithin", r, 100);
        assertEquals("failed: RpcTimeoutException", outcome);
        assertEquals(1, r.toHere());
        r.close();
        ownerTablesEmptyEventually();
    }

    // ---- coverage (these pass): cases the existing tests do not exercise

    /** Coverage (passes): the same RRef twice in one call, nested in lists, maps and records. */
    @Test
    void coverageTheSameRRefSentTwiceAndNestedIsCountedPerCopy() throws Exception {
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 20, 22);
        Object[] args = {"n", r, List.of(r, List.of(r)), Map.of("x", r), new Holder("h", r)};
        assertEquals(5, (Integer) w(0).rpcSync("worker2", "review.keepAll", args));
        r.close();
        controlMessagesSettle();
        for (int i = 0; i < 4; i++) {
            w(0).rpcSync("worker2", "review.release", "n" + i);
        }
        controlMessagesSettle();
        assertEquals(1, info(1, "num_owner_rrefs"), "n4 still holds it");
        assertEquals(42L, (Long) w(0).rpcSync("worker2", "review.fetchKept", "n4"));
        w(0).rpcSync("worker2", "review.release", "n4");
        ownerTablesEmptyEventually();
    }

    /** Coverage (passes): an RRef sent to the owner itself in a self-call and back. */
    @Test
    void coverageAnRRefInASelfCallAndInAResult() throws Exception {
        RRef<Long> r = w(0).remote("worker1", "builtin.add", 1, 2);
        List<Object> echoed = w(0).rpcSync("worker0", "builtin.echo", r, r);
        RRef<Long> viaSelf = w(0).rpcSync("worker0", "builtin.echo", r);
        RRef<Long> back = w(0).rpcSync("worker1", "builtin.echo", viaSelf);
        assertEquals(3L, back.toHere());
        r.close();
        viaSelf.close();
        back.close();
        echoed.forEach(o -> rref(o).close());
        // builtin.echo on worker1 dropped its owner handle without close: collected.
        for (int k = 0; k < WORLD; k++) {
            int rank = k;
            eventually(() -> gcNow() && info(rank, "num_owner_rrefs") == 0 && info(rank, "num_user_rrefs") == 0,
                    "worker" + k + " released everything: " + w(rank).debugInfo());
        }
    }

    /** Coverage (passes): closing while a toHere and a proxy call are in flight; the value stays until they end. */
    @Test
    void coverageClosingWhileAToHereIsInFlight() throws Exception {
        RRef<Integer> r = w(0).remote("worker1", "review.slow", 500, 9);
        eventually(r::confirmedByOwner, "confirmed");
        Future<Integer> value = r.toHereAsync();
        r.close();
        assertEquals(9, value.await(10, TimeUnit.SECONDS));
        ownerTablesEmptyEventually();
    }

    /** Await with a bound, rethrowing the failure unwrapped. */
    private static final class Await {
        static Object get(Future<?> f) throws Throwable {
            try {
                return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw e.getCause();
            }
        }
    }
}
