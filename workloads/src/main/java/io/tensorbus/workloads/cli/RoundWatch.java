package io.tensorbus.workloads.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Watches the rendezvous while this node runs its ranks of one round of an elastic job: once a second it beats and
 * reads the state. The ranks must stop when another node started a new round, when nodes wait to be admitted (this
 * node then starts the new round, as torchrun's agents do when {@code num_nodes_waiting() > 0}), when a node of the
 * round went quiet (its host died or was cut off), when the rendezvous was closed, or when its store stopped
 * answering.
 */
final class RoundWatch implements JobPeers, AutoCloseable {
    /** Why the ranks stopped; {@code fatal}: the job cannot go on here (closed, or the store is gone). */
    record Stop(String reason, boolean fatal) {
    }

    private final DynamicRendezvous rdzv;
    private final DynamicRendezvous.Round round;
    private final int maxNodes;
    private final Thread thread;
    private volatile Stop stop;
    private volatile boolean closed;

    private RoundWatch(DynamicRendezvous rdzv, DynamicRendezvous.Round round, int maxNodes) {
        this.rdzv = rdzv;
        this.round = round;
        this.maxNodes = maxNodes;
        this.thread = Thread.ofPlatform().daemon().name("tensorbus-launch-round-" + round.round()).unstarted(this::run);
    }

    /** Starts watching {@code round} on a daemon thread. */
    static RoundWatch start(DynamicRendezvous rdzv, DynamicRendezvous.Round round, int maxNodes) {
        RoundWatch w = new RoundWatch(rdzv, round, maxNodes);
        w.thread.start();
        return w;
    }

    /** Why the ranks stopped, or null. */
    Stop stop() {
        return stop;
    }

    @Override
    public String stopReason() {
        Stop s = stop;
        return s == null ? null : s.reason();
    }

    /** The agent decides what a failed rank means (a restart or the end): nothing to say here. */
    @Override
    public void rankFailed(String why) {
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }

    private void run() {
        try {
            while (!closed && stop == null) {
                rdzv.beatNowAndThen();
                stop = check(rdzv.read());
                Thread.sleep(1000);
            }
        } catch (InterruptedException e) {
            // Closed.
        } catch (RuntimeException e) {
            if (!closed) {
                stop = new Stop("lost the rendezvous: " + e.getMessage(), true);
            }
        }
    }

    private Stop check(RendezvousState s) {
        if (s.closed() != null) {
            return new Stop("the rendezvous is closed: " + s.closed(), true);
        }
        if (s.round() != round.round()) {
            return new Stop("another node started round " + s.round() + " (a node failed, left or asked to join)",
                    false);
        }
        if (!s.waiting().isEmpty() && s.participants().size() < maxNodes) {
            rdzv.requestNextRound(round.round());
            return new Stop("node(s) " + s.waiting() + " wait to join: round " + (round.round() + 1) + " admits them",
                    false);
        }
        rdzv.heartbeats().refresh(round.nodes());
        List<String> gone = new ArrayList<>();
        for (String p : round.nodes()) {
            if (rdzv.heartbeats().isGone(p)) {
                gone.add(p);
            }
        }
        if (!gone.isEmpty()) {
            rdzv.requestNextRound(round.round());
            return new Stop("node(s) " + gone + " stopped answering for " + Heartbeats.LEASE.toSeconds() + " s: round "
                    + (round.round() + 1) + " goes on without them", false);
        }
        return null;
    }
}
