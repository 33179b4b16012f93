package io.tensorbus.it;

import io.tensorbus.hazelcast.HazelcastCluster;
import io.vertx.core.Vertx;

/**
 * A program for {@link ProcessExitTest}: joins a Hazelcast-clustered Vert.x through {@link HazelcastCluster}
 * (arguments: cluster name, first port), prints {@code JOINED}, and returns from {@code main} without closing
 * it. Hazelcast's member threads are not daemons, so only tensorbus closing it lets the JVM end.
 */
public final class ClusterExitCheck {
    private ClusterExitCheck() {
    }

    public static void main(String[] args) {
        Vertx vertx = HazelcastCluster.join(args[0], "127.0.0.1", Integer.parseInt(args[1])).await();
        System.out.println("JOINED " + vertx.isClustered());
    }
}
