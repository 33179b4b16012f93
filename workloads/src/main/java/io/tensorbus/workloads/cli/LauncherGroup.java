package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The launchers of one job of a fixed set of nodes, meeting in the job's store as torchrun's agents do: each
 * registers itself, beats once a second ({@link Heartbeats}), says when one of its ranks failed, and says when it
 * ends. Every launcher watches the others, so that a rank failing anywhere, or a launcher that stops beating (its
 * host died or was cut off), ends the job on every node within seconds instead of at the group's timeout. Keys
 * live under {@code launch/}.
 */
final class LauncherGroup implements JobPeers, AutoCloseable {
    /** How often a launcher beats and reads the others. */
    static final Duration BEAT = Duration.ofSeconds(1);

    private static final String FAILED = "launch/failed";

    private final Store store;
    private final StoreCalls calls = new StoreCalls(StoreCalls.TCP);
    private final int nnodes;
    private final int node;
    private final String address;
    private final String storeAddress;
    private final Heartbeats heartbeats;
    private final List<String> others = new ArrayList<>();
    private volatile String failure;
    private volatile boolean closed;
    private Thread watcher;

    private LauncherGroup(Store store, int nnodes, int node, String address, String storeAddress) {
        this.store = store;
        this.nnodes = nnodes;
        this.node = node;
        this.address = address;
        this.storeAddress = storeAddress;
        this.heartbeats = new Heartbeats(store, calls, "launch/beat/", Integer.toString(node));
        for (int k = 0; k < nnodes; k++) {
            if (k != node) {
                others.add(Integer.toString(k));
            }
        }
    }

    /**
     * Registers this node's launcher and waits until every node's has, up to {@code setupTimeout}; then beats and
     * watches the others on a daemon thread until {@link #close()}.
     *
     * @param address this node's address, for the others' messages
     * @param storeAddress where the store is, for messages
     * @throws IllegalStateException naming the nodes that did not come, or a store that does not answer
     */
    static LauncherGroup join(Store store, int nnodes, int node, String address, String storeAddress,
            Duration setupTimeout) {
        LauncherGroup g = new LauncherGroup(store, nnodes, node, address, storeAddress);
        byte[] me = (address + " " + ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8);
        g.call(store.set(nodeKey(node), me), "registering");
        g.heartbeats.beat();
        g.awaitEveryNode(setupTimeout);
        g.watcher = Thread.ofPlatform().daemon().name("tensorbus-launch-peers").start(g::watch);
        return g;
    }

    private void awaitEveryNode(Duration setupTimeout) {
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < nnodes; k++) {
            keys.add(nodeKey(k));
        }
        try {
            store.wait(keys, setupTimeout).await(setupTimeout.toMillis() + 5000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            List<Integer> missing = new ArrayList<>();
            for (int k = 0; k < nnodes; k++) {
                if (!Boolean.TRUE.equals(calls.quietly(store.check(List.of(nodeKey(k)))))) {
                    missing.add(k);
                }
            }
            throw new IllegalStateException("the launchers of node(s) " + missing + " did not join the job at "
                    + storeAddress + " within " + setupTimeout.toSeconds() + " s (are they started, with the same"
                    + " --master-addr, --master-port and secret?)", e);
        }
    }

    /**
     * Why the job must end on this node, or null while it runs: another node's failure, a launcher that stopped
     * beating, or a store that stopped answering.
     */
    @Override
    public String stopReason() {
        return failure;
    }

    /** Tells every node that this one's rank failed; the first failure posted stays. */
    @Override
    public void rankFailed(String why) {
        String text = "node " + node + " (" + address + "): " + why;
        calls.quietly(store.compareSet(FAILED, new byte[0], text.getBytes(StandardCharsets.UTF_8)));
    }

    /** Tells every node that this one's launcher ends (its ranks are done, or stopped). */
    void ended() {
        calls.quietly(store.set(endedKey(node), new byte[] {1}));
    }

    /**
     * Waits until every other node's launcher ended or went quiet, or until {@code deadline}
     * ({@link System#nanoTime()}): node 0 hosts the store, which the others need as long as their ranks run.
     */
    void awaitOthersEnded(long deadline) throws InterruptedException {
        heartbeats.awaitEndedOrGone(others, k -> endedKey(Integer.parseInt(k)), deadline);
    }

    @Override
    public void close() {
        closed = true;
        if (watcher != null) {
            watcher.interrupt();
        }
    }

    private void watch() {
        try {
            while (!closed) {
                heartbeats.beat();
                if (failure == null) {
                    checkFailed();
                }
                heartbeats.refresh(others);
                checkGone();
                Thread.sleep(BEAT.toMillis());
            }
        } catch (InterruptedException e) {
            // Closed.
        } catch (RuntimeException e) {
            if (!closed && failure == null) {
                failure = "lost the job's store at " + storeAddress + (node == 0 ? ""
                        : " (hosted by node 0's launcher, which may be gone or cut off)") + ": " + e.getMessage();
            }
        }
    }

    private void checkFailed() {
        if (Boolean.TRUE.equals(call(store.check(List.of(FAILED)), "reading failures"))) {
            failure = new String(call(store.get(FAILED), "reading failures"), StandardCharsets.UTF_8);
        }
    }

    private void checkGone() {
        for (String k : others) {
            if (failure == null && heartbeats.isGone(k) && !ended(Integer.parseInt(k))) {
                failure = "the launcher of node " + k + " (" + peerAddress(Integer.parseInt(k)) + ") stopped answering:"
                        + " no heartbeat for " + Heartbeats.LEASE.toSeconds() + " s (its host is down or cut off, or"
                        + " the launcher was killed)";
            }
        }
    }

    private boolean ended(int k) {
        return Boolean.TRUE.equals(call(store.check(List.of(endedKey(k))), "reading beats"));
    }

    private String peerAddress(int k) {
        byte[] v = calls.quietly(store.get(nodeKey(k)));
        return v == null ? "address unknown" : new String(v, StandardCharsets.UTF_8).split(" ")[0];
    }

    private <T> T call(Future<T> f, String what) {
        return calls.call(f, what);
    }

    private static String nodeKey(int k) {
        return "launch/node/" + k;
    }

    private static String endedKey(int k) {
        return "launch/ended/" + k;
    }
}
