package io.tensorbus.distributed.rpc;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Cluster membership for agents whose Vert.x is clustered (Hazelcast, say): each worker publishes its
 * node id with its address, and each agent checks the cluster's members every {@value #POLL_MS} ms; a
 * worker whose node has left (missing from two reads in a row) is lost, its calls fail naming it, even
 * when its connections are still open (a frozen or partitioned process). The cluster manager's own node listener
 * belongs to Vert.x's event bus, hence the polling.
 */
final class RpcMembership {
    /** How often the members are read, in milliseconds. */
    static final long POLL_MS = 250;

    private RpcMembership() {
    }

    /** This process's node id in the Vert.x cluster, or "" when {@code vertx} is not clustered. */
    static String node(Vertx vertx) {
        ClusterManager cm = clusterManager(vertx);
        return cm == null ? "" : cm.getNodeId();
    }

    /** Starts watching the other workers' nodes when the agent's Vert.x is clustered. */
    static void watch(LocalWorker worker, RpcCalls calls, Consumer<Runnable> onClose) {
        ClusterManager cm = clusterManager(worker.vertx());
        if (cm == null) {
            return;
        }
        Watch w = new Watch();
        // Every worker had joined before the table was complete: what is seen now counts as seen.
        w.check(worker, calls, cm);
        long timer = worker.vertx().setPeriodic(POLL_MS, t -> w.check(worker, calls, cm));
        onClose.accept(() -> worker.vertx().cancelTimer(timer));
    }

    /**
     * What one agent has seen: a worker counts as lost once its node, seen among the members before, is
     * missing from two reads in a row (a member list may lag a join for a moment; a worker in another
     * cluster is never seen, so never lost).
     */
    private static final class Watch {
        private final Set<Integer> seen = new HashSet<>();
        private final Set<Integer> missing = new HashSet<>();
        private final Set<Integer> lost = new HashSet<>();

        void check(LocalWorker worker, RpcCalls calls, ClusterManager cm) {
            List<String> members = cm.getNodes();
            for (WorkerInfo w : worker.table().workers()) {
                String node = worker.table().address(w).node();
                if (w.id() == worker.self().id() || node.isEmpty() || lost.contains(w.id())) {
                    continue;
                }
                if (members.contains(node)) {
                    seen.add(w.id());
                    missing.remove(w.id());
                } else if (seen.contains(w.id()) && !missing.add(w.id())) {
                    lost.add(w.id());
                    calls.lost(w, "left the Vert.x cluster (node " + node + ")");
                }
            }
        }
    }

    private static ClusterManager clusterManager(Vertx vertx) {
        return vertx.isClustered() && vertx instanceof VertxInternal vi ? vi.clusterManager() : null;
    }
}
