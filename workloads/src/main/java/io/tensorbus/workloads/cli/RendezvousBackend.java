package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.ClusterStore;
import io.tensorbus.hazelcast.HazelcastCluster;
import io.vertx.core.Vertx;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where an elastic job's rendezvous state lives ({@code --rdzv-backend}): {@code c10d}, a {@code TcpStore} at the
 * endpoint, hosted by the launcher whose host has that address (the others connect; losing that host ends the
 * job), or {@code hazelcast}, a {@code ClusterStore} in a Hazelcast cluster of the launchers, which keeps a backup
 * of every key on another member, so that the job goes on when any one host is lost.
 */
final class RendezvousBackend implements AutoCloseable {
    private final Store store;
    private final AutoCloseable resource;
    private final String description;

    private RendezvousBackend(Store store, AutoCloseable resource, String description) {
        this.store = store;
        this.resource = resource;
        this.description = description;
    }

    /**
     * Opens the backend of {@code o}.
     *
     * @param address this node's address, which the other nodes reach
     * @param timeout how long the store's waiting calls may wait
     * @throws Exception when the store cannot be hosted or reached within the join timeout
     */
    static RendezvousBackend open(ElasticOptions o, String address, JobSecret secret, Duration timeout)
            throws Exception {
        return o.backend().equals("c10d") ? c10d(o, secret, timeout) : hazelcast(o, address, timeout);
    }

    private static RendezvousBackend c10d(ElasticOptions o, JobSecret secret, Duration timeout) throws Exception {
        ElasticOptions.Endpoint e = o.endpoint();
        if (isLocal(e.host())) {
            try {
                LaunchStore hosted = LaunchStore.startAt(e.host(), e.port(), timeout, secret);
                return new RendezvousBackend(hosted.store(), hosted, "the c10d store this launcher hosts at " + e);
            } catch (Exception taken) {
                // Another launcher of this host hosts it: connect as the others do.
            }
        }
        LaunchStore client = LaunchStore.connect(e.host(), e.port(), o.joinTimeout(), timeout, secret);
        return new RendezvousBackend(client.store(), client, "the c10d store at " + e);
    }

    private static RendezvousBackend hazelcast(ElasticOptions o, String address, Duration timeout) throws Exception {
        List<String> seeds = o.endpoints().stream().map(ElasticOptions.Endpoint::host).toList();
        int joinSeconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, o.joinTimeout().toSeconds()));
        Vertx vertx = HazelcastCluster.join("tensorbus-rdzv-" + o.runId(), address, o.endpoint().port(), seeds,
                joinSeconds).await(joinSeconds + 30L, TimeUnit.SECONDS);
        try {
            ClusterStore store = ClusterStore.open(vertx, "rdzv-" + o.runId(), timeout).await(30, TimeUnit.SECONDS);
            return new RendezvousBackend(store, () -> vertx.close().await(10, TimeUnit.SECONDS),
                    "the Hazelcast cluster of the nodes (joined through " + o.endpoints() + ")");
        } catch (Exception | Error e) {
            vertx.close();
            throw e;
        }
    }

    /** True for a loopback address or an address of one of this host's interfaces. */
    private static boolean isLocal(String host) {
        try {
            InetAddress a = InetAddress.getByName(host);
            return a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (Exception e) {
            return false;
        }
    }

    /** The calls to the store, with the patience its kind needs. */
    StoreCalls calls() {
        return new StoreCalls(store instanceof ClusterStore ? StoreCalls.CLUSTER
                : StoreCalls.TCP);
    }

    /** The store the rendezvous keeps its state in. */
    Store store() {
        return store;
    }

    /** What the store is, for messages. */
    String description() {
        return description;
    }

    @Override
    public void close() {
        try {
            resource.close();
        } catch (Exception e) {
            // Closing at the end: nothing depends on it any more.
        }
    }
}
