package io.tensorbus.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.tensorbus.distributed.ProcessExit;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A Vert.x clustered through Hazelcast with the settings tensorbus needs: Vert.x's own Hazelcast configuration
 * ({@code default-cluster.xml}), phone-home off (Hazelcast otherwise calls out on start), multicast and
 * auto-detection off, members found over TCP-IP on the given host and port range, and no wait before joining.
 * Workers then meet through {@code cluster://<job>} ({@link io.tensorbus.distributed.InitOptions} for process
 * groups, {@code RpcOptions.initMethod} for RPC) on the returned Vert.x. Hazelcast's open-source edition has no
 * member security: keep the ports private, and RPC's shared secret (or TLS) protects the calls.
 */
public final class HazelcastCluster {
    /** How many ports, from the first one, the members of one cluster may use. */
    public static final int PORT_COUNT = 10;

    private HazelcastCluster() {
    }

    /**
     * Starts a Hazelcast member of the cluster {@code name} listening on {@code host} at the first free
     * port of {@code firstPort} .. {@code firstPort + 9}, joining the members on those ports, and a Vert.x
     * clustered through it. Close the Vert.x to leave. A program that ends without closing it still ends: the
     * Vert.x runs on daemon threads, and once the program's own threads are done, it is closed with a
     * warning, which stops the member's threads too ({@link ProcessExit#closeWhenProgramEnds}).
     *
     * @throws IllegalArgumentException for a blank name or a port range outside 1..65535
     * @throws NullPointerException when {@code name} or {@code host} is null
     */
    public static Future<Vertx> join(String name, String host, int firstPort) {
        Config config = config(name, host, firstPort);
        String instance = "tensorbus-" + UUID.randomUUID();
        config.setInstanceName(instance);
        return Vertx.builder().with(new VertxOptions().setUseDaemonThread(true))
                .withClusterManager(new HazelcastClusterManager(config)).buildClustered()
                .onSuccess(vertx -> {
                    ProcessExit.Registration atExit = ProcessExit.closeWhenProgramEnds("the Hazelcast member of "
                            + "cluster '" + name + "'", vertx::close,
                            t -> t.getName().startsWith("hz." + instance + "."));
                    ((VertxInternal) vertx).addCloseHook(completion -> {
                        atExit.done();
                        completion.succeed();
                    });
                });
    }

    /**
     * The configuration {@link #join} uses, for callers that adjust it further.
     *
     * @throws IllegalArgumentException for a blank name or a port range outside 1..65535
     */
    public static Config config(String name, String host, int firstPort) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        if (name.isBlank()) {
            throw new IllegalArgumentException("a cluster name must not be blank");
        }
        if (firstPort < 1 || firstPort + PORT_COUNT - 1 > 65535) {
            throw new IllegalArgumentException("the ports " + firstPort + ".." + (firstPort + PORT_COUNT - 1)
                    + " are not all in 1..65535");
        }
        Config config = ConfigUtil.loadConfig();
        config.setClusterName(name);
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.logging.type", "jdk");
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(firstPort).setPortAutoIncrement(true).setPortCount(PORT_COUNT);
        network.getInterfaces().setEnabled(true).setInterfaces(List.of(host));
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        List<String> members = new ArrayList<>();
        for (int p = firstPort; p < firstPort + PORT_COUNT; p++) {
            members.add(host + ":" + p);
        }
        join.getTcpIpConfig().setEnabled(true).setMembers(members);
        return config;
    }
}
