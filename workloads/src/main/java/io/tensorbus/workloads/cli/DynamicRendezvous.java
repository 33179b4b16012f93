package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.Store;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * torchrun's dynamic rendezvous over a {@link Store}: the launchers of an elastic job meet in rounds. A node joins
 * the open round; once {@code minNodes} have joined, a last call of {@code lastCallTimeout} lets more come, and the
 * round completes with them (at once when {@code maxNodes} have), each node's rank its place in the sorted list of
 * participants. A node that arrives after the round completed waits, and the running nodes start a new round to
 * admit it; a node whose ranks fail, or that sees a participant go quiet ({@link Heartbeats}), starts one too. A
 * closed rendezvous (the job ended or failed for good) admits no one. Every change is a compare-and-set of the one
 * state key ({@link RendezvousState}), so any store serves: c10d's {@code TcpStore} or a {@code ClusterStore} of
 * Hazelcast.
 */
final class DynamicRendezvous {
    /** How often a waiting node reads the state. */
    static final Duration POLL = Duration.ofMillis(200);

    private final Store store;
    private final StoreCalls calls;
    private final ElasticOptions options;
    private final String node;
    private final String prefix;
    private final Heartbeats heartbeats;
    private long lastBeat;

    /** A completed round as this node takes part in it. */
    record Round(int round, int nodeRank, List<String> nodes) {
        /** The number of nodes of the round. */
        int nnodes() {
            return nodes.size();
        }
    }

    /**
     * @param node this node's id, unique in the job (its address and the launcher's pid)
     */
    DynamicRendezvous(Store store, StoreCalls calls, ElasticOptions options, String node) {
        this.store = store;
        this.calls = calls;
        this.options = options;
        this.node = node;
        this.prefix = "rdzv/" + options.runId() + "/";
        this.heartbeats = new Heartbeats(store, calls, prefix + "beat/", node);
    }

    /** This node's id. */
    String node() {
        return node;
    }

    /** The heartbeats of the job's nodes. */
    Heartbeats heartbeats() {
        return heartbeats;
    }

    /**
     * Joins the first round after {@code after} and waits until it completes, up to the join timeout.
     *
     * @param after the round this node last ran, or -1
     * @throws IllegalStateException when the rendezvous is closed, or no round completed in time
     * @throws StoreCalls.StoreLostException when the store stops answering
     */
    Round next(int after) throws InterruptedException {
        long end = System.nanoTime() + options.joinTimeout().toNanos();
        while (true) {
            beatNowAndThen();
            RendezvousState s = read();
            if (s.closed() != null) {
                throw new IllegalStateException("the rendezvous of job '" + options.runId() + "' is closed: "
                        + s.closed());
            }
            if (s.complete() && s.round() > after && s.participants().contains(node)) {
                return new Round(s.round(), s.participants().indexOf(node), s.participants());
            }
            if (s.complete()) {
                awaitNextRound(s);
            } else {
                joinOpenRound(s);
            }
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("no round of job '" + options.runId() + "' completed within "
                        + options.joinTimeout().toSeconds() + " s: " + s.participants().size() + " node(s) joined "
                        + s.participants() + ", it needs at least " + options.minNodes());
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** The running nodes admit a waiting one at a new round; when all of them are gone, this node starts it. */
    private void awaitNextRound(RendezvousState s) {
        if (!s.waiting().contains(node)) {
            update(st -> st.complete() && st.round() == s.round() && !st.waiting().contains(node)
                    ? st.waitingFor(node) : st);
            return;
        }
        heartbeats.refresh(s.participants());
        if (s.participants().stream().allMatch(p -> p.equals(node) || heartbeats.isGone(p))) {
            requestNextRound(s.round());
        }
    }

    private void joinOpenRound(RendezvousState s) {
        if (!s.participants().contains(node)) {
            long lastCall = options.lastCallTimeout().toMillis();
            update(st -> !st.complete() && st.round() == s.round() && !st.participants().contains(node)
                    ? st.joined(node, options.maxNodes(), options.minNodes(), System.currentTimeMillis(), lastCall)
                    : st);
            return;
        }
        heartbeats.refresh(s.participants());
        for (String p : s.participants()) {
            if (heartbeats.isGone(p)) {
                // It joined, then went quiet: the round must not complete with it.
                update(st -> !st.complete() && st.round() == s.round() && st.participants().contains(p)
                        ? st.without(p) : st);
                return;
            }
        }
        if (s.participants().size() >= options.minNodes() && s.lastCall() != 0
                && System.currentTimeMillis() >= s.lastCall()) {
            update(st -> !st.complete() && st.round() == s.round() ? st.completed() : st);
        }
    }

    /** Starts round {@code from + 1}, unless another node already moved past {@code from}. */
    void requestNextRound(int from) {
        update(st -> st.round() == from && st.closed() == null ? st.nextRound() : st);
    }

    /** Closes the rendezvous for {@code why}: every node stops and no one is admitted any more. */
    void close(String why) {
        update(st -> st.closed() == null ? st.closedFor(why) : st);
    }

    /** The state as it is now. */
    RendezvousState read() {
        String key = stateKey();
        if (!Boolean.TRUE.equals(calls.call(store.check(List.of(key)), "reading the rendezvous"))) {
            return RendezvousState.initial();
        }
        return RendezvousState.decode(calls.call(store.get(key), "reading the rendezvous"));
    }

    /** Tells the others where the ranks of {@code round} meet: the store that node rank 0 hosts. */
    void publishMaster(int round, String host, int port) {
        calls.call(store.set(prefix + "master/" + round, (host + ":" + port).getBytes(StandardCharsets.UTF_8)),
                "publishing the round's store");
    }

    /**
     * Where the ranks of {@code round} meet, as node rank 0 published it; waits up to the join timeout.
     *
     * @throws IllegalStateException when it was not published in time
     */
    String master(int round) {
        try {
            return new String(store.get(prefix + "master/" + round).await(options.joinTimeout().toMillis(),
                    TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
        } catch (Exception e) {
            throw new IllegalStateException("node rank 0 of round " + round + " did not say where its ranks meet"
                    + " within "
                    + options.joinTimeout().toSeconds() + " s: " + e.getMessage(), e);
        }
    }

    /** Says that this node's ranks of {@code round} all ended well. */
    void markDone(int round) {
        calls.quietly(store.set(prefix + "done/" + round + "/" + node, new byte[] {1}));
    }

    /**
     * Waits until every other node of {@code round} is done or gone, up to {@code limit}: the nodes that host the
     * round's store and the rendezvous keep them up until the others' ranks have ended.
     */
    void awaitDone(Round round, Duration limit) throws InterruptedException {
        heartbeats.awaitEndedOrGone(round.nodes(), p -> prefix + "done/" + round.round() + "/" + p,
                System.nanoTime() + limit.toNanos());
    }

    /** Beats at most once a second. */
    void beatNowAndThen() {
        long now = System.nanoTime();
        if (now - lastBeat >= Duration.ofSeconds(1).toNanos()) {
            heartbeats.beat();
            lastBeat = now;
        }
    }

    private String stateKey() {
        return prefix + "state";
    }

    /** Applies {@code change} to the state by compare-and-set, retrying while other nodes change it in between. */
    private void update(UnaryOperator<RendezvousState> change) {
        String key = stateKey();
        while (true) {
            boolean present = Boolean.TRUE.equals(calls.call(store.check(List.of(key)), "reading the rendezvous"));
            byte[] current = present ? calls.call(store.get(key), "reading the rendezvous") : new byte[0];
            RendezvousState s = present ? RendezvousState.decode(current) : RendezvousState.initial();
            RendezvousState next = change.apply(s);
            if (next == s) {
                return;
            }
            byte[] desired = next.encode();
            byte[] after = calls.call(store.compareSet(key, current, desired), "changing the rendezvous");
            if (Arrays.equals(after, desired)) {
                return;
            }
        }
    }
}
