package io.tensorbus.backend.gloo;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.Store;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.support.ListenAddresses;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.SocketAddress;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo's {@code rendezvous::Context::connectFullMesh} through the group's store, in the form of the PyTorch release the
 * group speaks with (property {@value #WIRE_PROPERTY}): {@link PerPairRendezvous} (gloo 5b14351, PyTorch 1.13:
 * a listening socket per pair) or {@link ListenerRendezvous} (gloo 6d8b511 on, PyTorch 2.2 and later: one listening
 * socket per group, pairs named by a sequence number); the latter when the property is absent. This class holds what
 * both share: the set-up deadline, the group's event loop, the client that dials, and how failures are named. The
 * keys sit under {@value #PREFIX}, ProcessGroupGloo's prefix for its first (and only) device.
 */
abstract class GlooRendezvous {
    /** ProcessGroupGloo's store prefix of device 0. */
    static final String PREFIX = "0/";
    /** The backend property naming the PyTorch wire ({@code V1_13} or {@code V2_2}), as interop mode sets it. */
    static final String WIRE_PROPERTY = "pytorch.interop";
    private static final System.Logger LOG = System.getLogger(GlooRendezvous.class.getName());

    final BackendOptions options;
    final ContextInternal loop;
    final GlooContext context;
    final Store store;
    /** The sockets this rank listens on, closed when the group breaks or closes (gloo keeps them as long). */
    final List<NetServer> servers = new ArrayList<>();
    private NetClient client;

    GlooRendezvous(BackendOptions options, ContextInternal loop) {
        this.options = options;
        this.loop = loop;
        this.store = options.store();
        this.context = new GlooContext(options.rank(), options.worldSize(), options.groupName(), loop);
    }

    /**
     * Connects this rank to every other of the group; completes with the connected context.
     *
     * @throws IllegalArgumentException when {@value #WIRE_PROPERTY} names no wire
     */
    static Future<GlooContext> connect(BackendOptions options) {
        String wire = options.property(WIRE_PROPERTY, "V2_2");
        if (!wire.equals("V1_13") && !wire.equals("V2_2")) {
            throw new IllegalArgumentException("backend property " + WIRE_PROPERTY + "=" + wire + " names no gloo "
                    + "rendezvous: V1_13 (PyTorch 1.13) or V2_2 (PyTorch 2.2 and later)");
        }
        ContextInternal loop = ((VertxInternal) options.vertx()).createEventLoopContext();
        GlooRendezvous r = wire.equals("V1_13") ? new PerPairRendezvous(options, loop)
                : new ListenerRendezvous(options, loop);
        Promise<GlooContext> result = loop.promise();
        loop.runOnContext(v -> r.start(result));
        return result.future();
    }

    /** Listens on {@code bindHost}, advertising {@code advertised}, publishes and connects every pair. */
    abstract Future<Void> mesh(String bindHost, String advertised);

    private void start(Promise<GlooContext> result) {
        long deadline = options.vertx().setTimer(options.setupTimeout().toMillis(), id -> {
            CommunicationException late = failure("did not connect to every peer within "
                    + options.setupTimeout().toMillis() + " ms", null);
            result.tryFail(late);
            context.breakWith(late);
        });
        String bindHost = options.property("gloo.bindHost", options.property("tcp.bindHost", "127.0.0.1"));
        Future.succeededFuture(bindHost)
                .compose(host -> {
                    warnUnlessLoopback(host);
                    return mesh(host, advertisedHost(host));
                })
                .onComplete(ar -> {
                    options.vertx().cancelTimer(deadline);
                    servers.forEach(server -> context.onBreak(server::close));
                    if (client != null) {
                        context.onBreak(client::close);
                    }
                    if (ar.failed()) {
                        Throwable e = ar.cause() instanceof CommunicationException ? ar.cause()
                                : failure(ar.cause().getMessage(), ar.cause());
                        result.tryFail(e);
                        context.breakWith(e);
                    } else if (!result.tryComplete(context)) {
                        context.breakWith(result.future().cause());
                    }
                });
    }

    private void warnUnlessLoopback(String bindHost) {
        try {
            if (!InetAddress.getByName(bindHost).isLoopbackAddress()) {
                LOG.log(System.Logger.Level.WARNING, "gloo group '" + options.groupName() + "' listens on " + bindHost
                        + ": gloo's connections carry no authentication (PyTorch's cannot prove a secret), so any"
                        + " host that reaches these ports can join or disturb the group; keep it on a trusted"
                        + " network");
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("gloo.bindHost '" + bindHost + "' does not resolve", e);
        }
    }

    /** Dials {@code peer} at {@code address}; completes with the connection, on the group's loop. */
    Future<NetSocketInternal> dial(int peer, GlooAddress address) {
        if (client == null) {
            client = options.vertx().createNetClient(new NetClientOptions().setTcpNoDelay(true)
                    .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, options.setupTimeout().toMillis())));
        }
        SocketAddress at = SocketAddress.inetSocketAddress(address.socketAddress());
        return here(client.connect(at))
                .recover(e -> Future.failedFuture(failure("cannot connect to rank " + peer + " at " + address + ": "
                        + e.getMessage(), e)))
                .map(NetSocketInternal.class::cast);
    }

    /**
     * {@code f}, its callbacks run on this group's event loop: the store completes on threads of its own, and the
     * servers, the client and the pairs must all live on the loop.
     */
    <T> Future<T> here(Future<T> f) {
        Promise<T> p = loop.promise();
        f.onComplete(p);
        return p.future();
    }

    private String advertisedHost(String bindHost) {
        return ListenAddresses.advertised(options.property("gloo.advertiseHost",
                options.property("tcp.advertiseHost", null)), bindHost, "gloo.advertiseHost");
    }

    /** gethostname(2), which gloo publishes so ranks can count the others on their host. */
    static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
        } catch (IOException | RuntimeException e) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException u) {
                return "localhost";
            }
        }
    }

    CommunicationException failure(String why, Throwable cause) {
        return new CommunicationException(options.groupName(), -1, "gloo group '" + options.groupName() + "': rank "
                + options.rank() + " of " + options.worldSize() + " " + why, cause);
    }
}
