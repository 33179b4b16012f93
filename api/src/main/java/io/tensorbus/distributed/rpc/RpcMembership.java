package io.tensorbus.distributed.rpc;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Cluster membership for agents whose Vert.x is clustered (Hazelcast, say): each worker publishes its
 * node id with its address, and each agent checks the cluster's members every {@value #POLL_MS} ms; a
 * worker whose node has left is lost at once, its calls fail naming it, even when its connections are
 * still open (a frozen or partitioned process). The cluster manager's own node listener belongs to
 * Vert.x's event bus, hence the polling.
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
    static void watch(RpcAgent agent) {
        ClusterManager cm = clusterManager(agent.vertx());
        if (cm == null) {
            return;
        }
        Set<Integer> lost = new HashSet<>();
        long timer = agent.vertx().setPeriodic(POLL_MS, t -> check(agent, cm, lost));
        agent.onClose(() -> agent.vertx().cancelTimer(timer));
    }

    private static void check(RpcAgent agent, ClusterManager cm, Set<Integer> lost) {
        List<String> members = cm.getNodes();
        for (WorkerInfo w : agent.workers()) {
            String node = agent.table().address(w).node();
            if (w.id() != agent.self().id() && !node.isEmpty() && !members.contains(node) && lost.add(w.id())) {
                agent.lost(w, "left the Vert.x cluster (node " + node + ")");
            }
        }
    }

    private static ClusterManager clusterManager(Vertx vertx) {
        return vertx.isClustered() && vertx instanceof VertxInternal vi ? vi.clusterManager() : null;
    }
}
