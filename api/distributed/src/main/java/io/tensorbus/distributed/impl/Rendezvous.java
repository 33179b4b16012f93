package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.ClusterStore;
import io.tensorbus.distributed.FileStore;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.PyTorchTcpStore;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.distributed.TcpStore;
import io.tensorbus.internal.distributed.AdvertisedHost;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Turns an init method into a rank, a world size and a store, as c10d's rendezvous handlers do:
 * {@code env://} (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), {@code tcp://host:port},
 * {@code file:///path} and {@code cluster://name} (a {@link ClusterStore} in the shared data of the clustered
 * Vert.x the options carry). For TCP, rank 0 hosts the store unless {@code TENSORBUS_STORE_HOSTED=1} says a
 * launcher already does (torchrun's agent store).
 *
 * @param rank this process's rank
 * @param worldSize the number of processes
 * @param store the store, not yet prefixed with the group name
 * @param bindHost the host the backend should listen on
 * @param advertiseHost the address this process tells its peers to connect to ({@link AdvertisedHost})
 */
public record Rendezvous(int rank, int worldSize, Store store, String bindHost, String advertiseHost) {

    /** The property that names the address to publish outright. */
    public static final String ADVERTISE_HOST = "tcp.advertiseHost";

    /** The scheme of {@link ClusterStore} init methods; the rest of the URL is the store's name. */
    private static final String CLUSTER = "cluster://";

    /** Resolves {@code options}; fails with a message naming a missing or malformed setting. */
    public static Future<Rendezvous> resolve(InitOptions options, Vertx vertx) {
        try {
            Map<String, String> env = options.environment();
            String url = options.initMethod();
            if (options.store() != null) {
                int[] rw = rankAndWorld(options, env, true);
                return Future.succeededFuture(local(options, rw, options.store()));
            }
            if (url.equals("env://")) {
                int[] rw = rankAndWorld(options, env, true);
                String host = required(env, "MASTER_ADDR");
                int port = port(required(env, "MASTER_PORT"), "MASTER_PORT");
                return tcp(options, vertx, env, host, port, rw);
            }
            if (options.pytorchInterop() && !url.startsWith("tcp://")) {
                throw new IllegalArgumentException("PyTorch interop meets PyTorch's store through env:// or "
                        + "tcp://host:port, not '" + url + "'");
            }
            if (url.startsWith(CLUSTER)) {
                return cluster(options, vertx, url.substring(CLUSTER.length()), rankAndWorld(options, env, false));
            }
            URI uri = new URI(url);
            int[] rw = rankAndWorld(options, env, false);
            return switch (String.valueOf(uri.getScheme())) {
                case "tcp" -> tcp(options, vertx, env, hostOf(uri, url), portOf(uri, url), rw);
                case "file" -> Future.succeededFuture(local(options, rw,
                        new FileStore(Path.of(uri), rw[1], options.timeout())));
                default -> throw new IllegalArgumentException("init method '" + url
                        + "' is not supported: use env://, tcp://host:port, file:///path or cluster://name");
            };
        } catch (URISyntaxException | RuntimeException e) {
            return Future.failedFuture(e instanceof URISyntaxException
                    ? new IllegalArgumentException("init method '" + options.initMethod() + "' is not a URL: "
                    + e.getMessage(), e) : e);
        }
    }

    private static Future<Rendezvous> tcp(InitOptions options, Vertx vertx, Map<String, String> env, String host,
                                          int port, int[] rw) {
        boolean hosted = "1".equals(env.get("TENSORBUS_STORE_HOSTED"));
        boolean server = rw[0] == 0 && !hosted;
        if (options.pytorchInterop()) {
            return pytorchTcp(options, vertx, env, host, port, rw, server);
        }
        if (server && port == 0) {
            throw new IllegalArgumentException("port 0 needs a launcher that hosts the store and publishes its port "
                    + "(tensorbus launch does); rank 0 cannot tell the others which port it bound");
        }
        // A client tries to reach the master until the set-up deadline, then waits as long as the group's timeout.
        Future<TcpStore> store = server ? TcpStore.server(vertx, host, port, options.timeout(), options.secret())
                : TcpStore.client(vertx, host, port, options.setupTimeout(), options.secret())
                        .map(c -> {
                            c.setTimeout(options.timeout());
                            return c;
                        });
        String bind = options.properties().getOrDefault("tcp.bindHost", isLoopback(host) ? "127.0.0.1" : "0.0.0.0");
        String advertise = advertise(options, env, bind, host, rw[0]);
        return store.map(s -> new Rendezvous(rw[0], rw[1], s, bind, advertise));
    }

    /**
     * The store of a job with PyTorch processes: PyTorch's TCPStore wire, hosted by rank 0 as
     * {@code init_process_group} hosts it, every process counted under {@code init/} as PyTorch's clients are.
     */
    private static Future<Rendezvous> pytorchTcp(InitOptions options, Vertx vertx, Map<String, String> env,
                                                 String host, int port, int[] rw, boolean server) {
        if (server && port == 0) {
            throw new IllegalArgumentException("port 0 cannot be told to PyTorch's ranks; give the store's port");
        }
        PyTorchWire wire = options.pytorchWire();
        Future<PyTorchTcpStore> store = server ? PyTorchTcpStore.host(vertx, host, port, options.timeout(), wire)
                : PyTorchTcpStore.connect(vertx, host, port, options.setupTimeout(), wire).map(c -> {
                    c.setTimeout(options.timeout());
                    return c;
                });
        String bind = options.properties().getOrDefault("tcp.bindHost", isLoopback(host) ? "127.0.0.1" : "0.0.0.0");
        String advertise = advertise(options, env, bind, host, rw[0]);
        return store.compose(s -> s.waitForWorkers(rw[1], server).map(v -> new Rendezvous(rw[0], rw[1], s, bind,
                advertise)).onFailure(e -> s.close()));
    }

    /** {@code cluster://name}: the store {@code name} of the cluster that {@code vertx} is a member of. */
    private static Future<Rendezvous> cluster(InitOptions options, Vertx vertx, String name, int[] rw) {
        if (name.isBlank()) {
            throw new IllegalArgumentException("init method '" + CLUSTER + name + "' has no store name: use "
                    + "cluster://name (1 to " + ClusterStore.MAX_NAME_LENGTH + " chars, the same on every rank)");
        }
        if (!vertx.isClustered()) {
            throw new IllegalArgumentException("init method '" + CLUSTER + name + "' needs a clustered Vert.x "
                    + "passed through the options' vertx(...) (e.g. Vertx.builder().withClusterManager(manager)"
                    + ".buildClustered()); the Vert.x in use is not clustered");
        }
        // Where the cluster manager's member listens (Hazelcast's address), peers reach this process too.
        ClusterManager cm = ((VertxInternal) vertx).clusterManager();
        String node = cm == null ? null : cm.clusterHost();
        String bind = options.properties().getOrDefault("tcp.bindHost",
                node == null || AdvertisedHost.isLoopback(node) ? "127.0.0.1" : "0.0.0.0");
        String advertise = advertise(options, options.environment(), bind, node, rw[0]);
        return ClusterStore.open(vertx, name, options.timeout())
                .map(s -> new Rendezvous(rw[0], rw[1], s, bind, advertise));
    }

    /** A rendezvous without a master (a store given, a file): binds {@code tcp.bindHost}, else loopback. */
    private static Rendezvous local(InitOptions options, int[] rw, Store store) {
        String bind = options.properties().getOrDefault("tcp.bindHost", "127.0.0.1");
        return new Rendezvous(rw[0], rw[1], store, bind, advertise(options, options.environment(), bind, null, rw[0]));
    }

    private static String advertise(InitOptions options, Map<String, String> env, String bind, String master,
            int rank) {
        return AdvertisedHost.choose(options.properties().get(ADVERTISE_HOST), env, bind, master, "rank " + rank);
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown master host '" + host + "'", e);
        }
    }

    private static int[] rankAndWorld(InitOptions options, Map<String, String> env, boolean fromEnv) {
        int rank = options.rank() >= 0 ? options.rank() : fromEnv || env.containsKey("RANK")
                ? integer(required(env, "RANK"), "RANK") : missing("rank");
        int world = options.worldSize() >= 0 ? options.worldSize() : fromEnv || env.containsKey("WORLD_SIZE")
                ? integer(required(env, "WORLD_SIZE"), "WORLD_SIZE") : missing("worldSize");
        if (world < 1) {
            throw new IllegalArgumentException("worldSize=" + world + " must be at least 1");
        }
        if (rank < 0 || rank >= world) {
            throw new IllegalArgumentException("rank=" + rank + " is outside [0, " + world + ") for worldSize="
                    + world);
        }
        return new int[] {rank, world};
    }

    private static int missing(String what) {
        throw new IllegalArgumentException(what + " is required: set it in InitOptions or in the environment");
    }

    private static String required(Map<String, String> env, String name) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            List<String> needed = new ArrayList<>(List.of("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"));
            needed.removeIf(env::containsKey);
            throw new IllegalArgumentException("env:// needs the environment variable " + name + " (missing: "
                    + needed + "); `tensorbus launch` sets them");
        }
        return v.trim();
    }

    private static int integer(String text, String name) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "='" + text + "' is not an integer");
        }
    }

    private static int port(String text, String name) {
        int p = integer(text, name);
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException(name + "=" + p + " is not a port (0-65535)");
        }
        return p;
    }

    private static String hostOf(URI uri, String url) {
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("init method '" + url + "' has no host: use tcp://host:port");
        }
        String h = uri.getHost();
        return h.startsWith("[") ? h.substring(1, h.length() - 1) : h;
    }

    private static int portOf(URI uri, String url) {
        if (uri.getPort() < 0) {
            throw new IllegalArgumentException("init method '" + url + "' has no port: use tcp://host:port");
        }
        return uri.getPort();
    }
}
