/**
 * Joining a Hazelcast-clustered Vert.x ({@link io.tensorbus.hazelcast.HazelcastCluster}), for process groups
 * and RPC agents that meet through {@code cluster://} and detect lost members through the cluster.
 *
 * <p>Threads: Hazelcast's member threads are not daemons; the Vert.x it joins is closed once no other
 * non-daemon thread of the program runs, so the process still ends with its program.
 */
package io.tensorbus.hazelcast;
