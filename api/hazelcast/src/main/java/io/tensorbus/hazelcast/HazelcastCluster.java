package io.tensorbus.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.internal.distributed.VertxMeters;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.net.InetAddress;
import java.net.UnknownHostException;
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

    /** How long a member tries to join its cluster by default, in seconds (Hazelcast's own default). */
    public static final int DEFAULT_JOIN_SECONDS = 300;

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
        return join(name, host, firstPort, host, DEFAULT_JOIN_SECONDS);
    }

    /**
     * {@link #join(String, String, int)} for a cluster across hosts: this member listens on {@code host} (an
     * address of this machine its peers reach) and finds the others through the member on {@code seedHost} (the
     * job's master host, where the first member of the job takes {@code firstPort}). A member on another host than
     * the seed waits for that member (Hazelcast's required member) rather than forming a cluster of its own, so
     * that hosts started in any order make one cluster. The future fails naming the seed when the cluster cannot
     * be joined within {@code joinSeconds}.
     *
     * @throws IllegalArgumentException for a blank name, a port range outside 1..65535, an unknown seed host or
     *     {@code joinSeconds} below 1
     * @throws NullPointerException when an argument is null
     */
    public static Future<Vertx> join(String name, String host, int firstPort, String seedHost, int joinSeconds) {
        return start(config(name, host, firstPort, seedHost, joinSeconds), name, host,
                "through the member on " + seedHost + ":" + firstPort, firstPort, joinSeconds);
    }

    /**
     * {@link #join(String, String, int)} for a cluster with no member that must be up: this member listens on
     * {@code host} and joins whichever of the members on {@code seeds} (each with the ports {@code firstPort} ..
     * {@code firstPort + 9}) answer; the first to start forms the cluster. No single member's loss ends it, which
     * is what an elastic job's rendezvous needs.
     *
     * @throws IllegalArgumentException for a blank name, a port range outside 1..65535, an unknown seed host or
     *     {@code joinSeconds} below 1
     * @throws NullPointerException when an argument is null
     */
    public static Future<Vertx> join(String name, String host, int firstPort, List<String> seeds, int joinSeconds) {
        Config config = build(name, host, firstPort, seeds, null, joinSeconds);
        return start(config, name, host, "through the members on " + seeds, firstPort, joinSeconds);
    }

    private static Future<Vertx> start(Config config, String name, String host, String through, int firstPort,
            int joinSeconds) {
        String instance = "tensorbus-" + UUID.randomUUID();
        config.setInstanceName(instance);
        return VertxMeters.builder(new VertxOptions().setUseDaemonThread(true))
                .withClusterManager(new HazelcastClusterManager(config)).buildClustered()
                .recover(e -> Future.failedFuture(new IllegalStateException("could not join the Hazelcast cluster '"
                        + name + "' as " + host + " " + through + " within " + joinSeconds + " s (is a member up there,"
                        + " and do the ports " + firstPort + ".." + (firstPort + PORT_COUNT - 1) + " reach it?): "
                        + e.getMessage(), e)))
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
        return config(name, host, firstPort, host, DEFAULT_JOIN_SECONDS);
    }

    /**
     * The configuration {@link #join(String, String, int, String, int)} uses.
     *
     * @throws IllegalArgumentException for a blank name, a port range outside 1..65535, an unknown seed host or
     *     {@code joinSeconds} below 1
     */
    public static Config config(String name, String host, int firstPort, String seedHost, int joinSeconds) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(seedHost, "seedHost");
        boolean remote = !literal(seedHost).equals(literal(host));
        return build(name, host, firstPort, List.of(seedHost), remote ? literal(seedHost) + ":" + firstPort : null,
                joinSeconds);
    }

    /**
     * The configuration: phone-home off, multicast and auto-detection off, TCP-IP members on the port ranges of
     * {@code host} and every seed, {@code required} the member that must be up (null for none). Members beat once
     * a second and count one silent for 10 s as gone (Hazelcast's default is 60 s), so that a lost host is noticed
     * within seconds.
     */
    private static Config build(String name, String host, int firstPort, List<String> seeds, String required,
            int joinSeconds) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(seeds, "seeds");
        if (joinSeconds < 1) {
            throw new IllegalArgumentException("joinSeconds must be at least 1, got " + joinSeconds);
        }
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
        config.setProperty("hazelcast.max.join.seconds", Integer.toString(joinSeconds));
        config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        config.setProperty("hazelcast.max.no.heartbeat.seconds", "10");
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(firstPort).setPortAutoIncrement(true).setPortCount(PORT_COUNT);
        network.getInterfaces().setEnabled(true).setInterfaces(List.of(host));
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        // Literal addresses: with interfaces set, Hazelcast drops member names that resolve outside them.
        List<String> hosts = new ArrayList<>(List.of(literal(host)));
        seeds.stream().map(HazelcastCluster::literal).filter(h -> !hosts.contains(h)).forEach(hosts::add);
        List<String> members = new ArrayList<>();
        for (String h : hosts) {
            for (int p = firstPort; p < firstPort + PORT_COUNT; p++) {
                members.add(h + ":" + p);
            }
        }
        // How long a member looks for a master among the listed addresses before it claims to be one (5 s by
        // default): the members of a job start within a second or two of each other, on ports that answer at once.
        join.getTcpIpConfig().setEnabled(true).setMembers(members).setConnectionTimeoutSeconds(1);
        if (required != null) {
            join.getTcpIpConfig().setRequiredMember(required);
        }
        return config;
    }

    private static String literal(String host) {
        try {
            return InetAddress.getByName(host).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host '" + host + "'", e);
        }
    }
}
