package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.HashStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The dynamic rendezvous of elastic jobs, with its nodes as threads over one {@link HashStore}. */
@Timeout(60)
class DynamicRendezvousTest {
    private final HashStore store = new HashStore();

    private static ElasticOptions options(int min, int max, Duration join, Duration lastCall) {
        return new ElasticOptions(min, max, "c10d", List.of(new ElasticOptions.Endpoint("127.0.0.1", 1)), "job", join,
                lastCall);
    }

    private DynamicRendezvous node(String id, ElasticOptions o) {
        return new DynamicRendezvous(store, new StoreCalls(StoreCalls.TCP), o, id);
    }

    /** {@code r.next(after)} on a thread of its own: each node waits for the others. */
    private static CompletableFuture<DynamicRendezvous.Round> next(DynamicRendezvous r, int after) {
        CompletableFuture<DynamicRendezvous.Round> f = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                f.complete(r.next(after));
            } catch (InterruptedException | RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    @Test
    void nodesMeetInARoundAndTakeTheirRanksFromTheSortedIds() throws Exception {
        ElasticOptions o = options(2, 3, Duration.ofSeconds(30), Duration.ofMillis(500));
        List<CompletableFuture<DynamicRendezvous.Round>> rounds = new ArrayList<>();
        for (String id : List.of("10.0.0.3/7", "10.0.0.1/9", "10.0.0.2/8")) {
            rounds.add(next(node(id, o), -1));
        }
        List<String> sorted = List.of("10.0.0.1/9", "10.0.0.2/8", "10.0.0.3/7");
        int[] expectedRank = {2, 0, 1};
        for (int i = 0; i < 3; i++) {
            DynamicRendezvous.Round r = rounds.get(i).get(20, TimeUnit.SECONDS);
            assertEquals(0, r.round());
            assertEquals(sorted, r.nodes());
            assertEquals(expectedRank[i], r.nodeRank());
        }
    }

    @Test
    void theMinimumAloneCompletesTheRoundAfterTheLastCall() throws Exception {
        ElasticOptions o = options(2, 4, Duration.ofSeconds(30), Duration.ofMillis(300));
        CompletableFuture<DynamicRendezvous.Round> a = next(node("a", o), -1);
        CompletableFuture<DynamicRendezvous.Round> b = next(node("b", o), -1);
        assertEquals(2, a.get(20, TimeUnit.SECONDS).nnodes());
        assertEquals(List.of("a", "b"), b.get(20, TimeUnit.SECONDS).nodes());
    }

    @Test
    void aNodeArrivingLateWaitsAndIsAdmittedAtTheNextRound() throws Exception {
        ElasticOptions o = options(2, 3, Duration.ofSeconds(30), Duration.ofSeconds(1));
        DynamicRendezvous a = node("a", o);
        DynamicRendezvous b = node("b", o);
        CompletableFuture<DynamicRendezvous.Round> ra = next(a, -1);
        CompletableFuture<DynamicRendezvous.Round> rb = next(b, -1);
        assertEquals(0, ra.get(20, TimeUnit.SECONDS).round());
        assertEquals(0, rb.get(20, TimeUnit.SECONDS).round());
        CompletableFuture<DynamicRendezvous.Round> rc = next(node("c", o), -1);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!a.read().waiting().contains("c") && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertEquals(List.of("c"), a.read().waiting(), "c waits for the next round");
        a.requestNextRound(0);
        b.requestNextRound(0);
        CompletableFuture<DynamicRendezvous.Round> na = next(a, 0);
        CompletableFuture<DynamicRendezvous.Round> nb = next(b, 0);
        DynamicRendezvous.Round again = na.get(20, TimeUnit.SECONDS);
        assertEquals(1, again.round());
        assertEquals(List.of("a", "b", "c"), again.nodes());
        assertEquals(1, nb.get(20, TimeUnit.SECONDS).round());
        assertEquals(2, rc.get(20, TimeUnit.SECONDS).nodeRank());
        assertEquals(1, a.read().round(), "the second request found the round moved on and changed nothing");
    }

    @Test
    void aRoundThatNeverHasItsMinimumFailsAfterTheJoinTimeoutSayingWhoCame() {
        ElasticOptions o = options(3, 3, Duration.ofSeconds(1), Duration.ofSeconds(30));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> node("lonely", o).next(-1));
        assertTrue(e.getMessage().contains("no round of job 'job' completed within 1 s: 1 node(s) joined [lonely], it"
                + " needs at least 3"), e.getMessage());
    }

    @Test
    void aClosedRendezvousAdmitsNoOneAndSaysWhy() throws Exception {
        ElasticOptions o = options(1, 2, Duration.ofSeconds(30), Duration.ofMillis(100));
        DynamicRendezvous a = node("a", o);
        assertEquals(0, next(a, -1).get(20, TimeUnit.SECONDS).round());
        a.close("node a: rank 0 exited with code 3 (no restarts left of 0)");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> node("b", o).next(-1));
        assertEquals("the rendezvous of job 'job' is closed: node a: rank 0 exited with code 3 (no restarts left of 0)",
                e.getMessage());
    }

    @Test
    void theRoundsStoreIsPublishedByNodeRankZeroAndReadByTheOthers() {
        ElasticOptions o = options(1, 2, Duration.ofSeconds(5), Duration.ofMillis(100));
        node("a", o).publishMaster(4, "10.0.0.1", 4242);
        assertEquals("10.0.0.1:4242", node("b", o).master(4));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> node("b", options(1, 2, Duration.ofSeconds(1), Duration.ofMillis(100))).master(5));
        assertTrue(e.getMessage().startsWith("node rank 0 of round 5 did not say where its ranks meet within 1 s"),
                e.getMessage());
    }

    @Test
    void theStateSurvivesItsEncodingAndAMalformedOneIsNamed() {
        RendezvousState s = RendezvousState.initial().joined("a", 3, 1, 1000, 50).waitingFor("z").closedFor("done");
        assertEquals(s, RendezvousState.decode(s.encode()));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> RendezvousState.decode("{\"round\": \"x\"}".getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().startsWith("the rendezvous state is malformed"), e.getMessage());
    }
}
