package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.Store;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Liveness of the launchers of a job, as torchrun's rendezvous keep-alive: each beats a counter of its own in the
 * store, and a node whose counter has not moved for {@link #LEASE}, as this launcher saw it, counts as gone (its host
 * died or was cut off, or the launcher was killed). Safe to use from several threads.
 */
final class Heartbeats {
    /** How long without a beat before a node counts as gone. */
    static final Duration LEASE = Duration.ofSeconds(10);

    /**
     * A pause between two reads longer than this means the reads stalled, not the nodes; after one, a node that
     * beats once a second has this long again before it counts as gone.
     */
    static final Duration GAP = Duration.ofSeconds(3);

    /** How often {@link #awaitEndedOrGone} looks. */
    private static final long POLL_MILLIS = 250;

    private final Store store;
    private final StoreCalls calls;
    private final String prefix;
    private final String self;
    private final Map<String, long[]> seen = new ConcurrentHashMap<>();
    private volatile long lastRefresh = System.nanoTime();

    /**
     * @param prefix the keys' prefix ({@code key = prefix + node})
     * @param self this node, whose counter {@link #beat()} moves
     */
    Heartbeats(Store store, StoreCalls calls, String prefix, String self) {
        this.store = store;
        this.calls = calls;
        this.prefix = prefix;
        this.self = self;
    }

    /** Moves this node's counter. */
    void beat() {
        calls.call(store.add(prefix + self, 1), "beating");
    }

    /** Reads the counters of {@code nodes}, noting when each last moved. */
    void refresh(Collection<String> nodes) {
        long now = System.nanoTime();
        if (now - lastRefresh > GAP.toNanos()) {
            // This launcher could not look for a while (the store stalled, as Hazelcast's does while it declares a
            // member lost): nobody could beat then either, so the live nodes get GAP from now to beat again.
            long grace = now - LEASE.toNanos() + GAP.toNanos();
            seen.values().forEach(last -> last[1] = Math.max(last[1], grace));
        }
        lastRefresh = now;
        for (String node : nodes) {
            if (node.equals(self)) {
                continue;
            }
            long beat = calls.call(store.add(prefix + node, 0), "reading heartbeats");
            long[] last = seen.computeIfAbsent(node, n -> new long[] {-1, now});
            if (last[0] != beat) {
                last[0] = beat;
                last[1] = now;
            }
        }
    }

    /** True when {@code node}'s counter has not moved for {@link #LEASE} since this launcher first read it. */
    boolean isGone(String node) {
        long[] last = seen.get(node);
        return last != null && System.nanoTime() - last[1] > LEASE.toNanos();
    }

    /**
     * Waits until every node of {@code nodes} but this one has set its key {@code endedKey} or is gone, or until
     * {@code deadline} ({@link System#nanoTime()}): a launcher that hosts a store the others still need keeps it up
     * until their ranks have ended. Returns at once when the store itself stops answering: no one can need it then.
     */
    void awaitEndedOrGone(Collection<String> nodes, Function<String, String> endedKey, long deadline)
            throws InterruptedException {
        while (System.nanoTime() - deadline < 0) {
            try {
                refresh(nodes);
            } catch (StoreCalls.StoreLostException e) {
                return;
            }
            if (nodes.stream().allMatch(n -> n.equals(self) || isGone(n)
                    || Boolean.TRUE.equals(calls.quietly(store.check(List.of(endedKey.apply(n))))))) {
                return;
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
