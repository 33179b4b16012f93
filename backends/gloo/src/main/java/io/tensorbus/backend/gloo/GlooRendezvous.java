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
import io.vertx.core.net.NetServerOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo's {@code rendezvous::Context::connectFullMesh} through the group's store: every rank writes its host name
 * under {@code 0/rank_<rank>} and, under {@code 0/<rank>}, one listening address per peer in rank order (a
 * listening socket per pair, as gloo's TCP transport of PyTorch 1.13 has); then each pair connects, the side with
 * the greater address dialing. The {@code 0/} is ProcessGroupGloo's prefix for its first (and only) device.
 */
final class GlooRendezvous {
    /** ProcessGroupGloo's store prefix of device 0. */
    static final String PREFIX = "0/";
    private static final System.Logger LOG = System.getLogger(GlooRendezvous.class.getName());

    private final BackendOptions options;
    private final ContextInternal loop;
    private final GlooContext context;
    private final Store store;
    private final List<NetServer> servers = new ArrayList<>();
    private final List<Promise<Void>> acceptedFrom = new ArrayList<>();
    private NetClient client;

    private GlooRendezvous(BackendOptions options, ContextInternal loop) {
        this.options = options;
        this.loop = loop;
        this.store = options.store();
        this.context = new GlooContext(options.rank(), options.worldSize(), options.groupName(), loop);
    }

    /** Connects this rank to every other of the group; completes with the connected context. */
    static Future<GlooContext> connect(BackendOptions options) {
        ContextInternal loop = ((VertxInternal) options.vertx()).createEventLoopContext();
        Promise<GlooContext> result = loop.promise();
        loop.runOnContext(v -> new GlooRendezvous(options, loop).start(result));
        return result.future();
    }

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
                    return here(store.set(PREFIX + "rank_" + options.rank(),
                            hostName().getBytes(StandardCharsets.UTF_8)));
                })
                .compose(v -> listen(bindHost))
                .compose(this::publish)
                .compose(this::connectAll)
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

    /** One listening socket per peer, in rank order; completes with their addresses. */
    private Future<List<GlooAddress>> listen(String bindHost) {
        String advertised = advertisedHost(bindHost);
        List<Future<GlooAddress>> addresses = new ArrayList<>();
        for (int peer = 0; peer < options.worldSize(); peer++) {
            if (peer == options.rank()) {
                continue;
            }
            NetServer server = options.vertx().createNetServer(new NetServerOptions().setHost(bindHost).setPort(0)
                    .setTcpNoDelay(true).setAcceptBacklog(1));
            servers.add(server);
            Promise<Void> accepted = Promise.promise();
            acceptedFrom.add(accepted);
            GlooPair pair = context.pair(peer);
            server.connectHandler(socket -> {
                if (accepted.tryComplete()) {
                    // gloo closes its listener here; a Vert.x server's close would close this connection too, so the
                    // server stays open until the group closes and turns every later connection away.
                    pair.attach((NetSocketInternal) socket);
                } else {
                    socket.close();
                }
            });
            addresses.add(server.listen().map(s -> GlooAddress.of(new InetSocketAddress(advertised, s.actualPort()))));
        }
        return Future.all(addresses).map(all -> all.<GlooAddress>list());
    }

    /** Writes this rank's addresses, one per peer in rank order, as gloo's {@code connectFullMesh} does. */
    private Future<List<GlooAddress>> publish(List<GlooAddress> own) {
        byte[] all = new byte[own.size() * GlooAddress.BYTES];
        for (int i = 0; i < own.size(); i++) {
            System.arraycopy(own.get(i).bytes(), 0, all, i * GlooAddress.BYTES, GlooAddress.BYTES);
        }
        return here(store.set(PREFIX + options.rank(), all)).map(v -> own);
    }

    private Future<Void> connectAll(List<GlooAddress> own) {
        List<Future<Void>> pairs = new ArrayList<>();
        int index = 0;
        for (int peer = 0; peer < options.worldSize(); peer++) {
            if (peer != options.rank()) {
                pairs.add(connect(peer, own.get(index), acceptedFrom.get(index)));
                index++;
            }
        }
        return Future.all(pairs).mapEmpty();
    }

    /** Connects the pair with {@code peer} once its addresses are in the store: dials it, or waits to be dialed. */
    private Future<Void> connect(int peer, GlooAddress self, Promise<Void> accepted) {
        int index = options.rank() > peer ? options.rank() - 1 : options.rank();
        return here(store.get(PREFIX + peer)).compose(list -> {
            GlooAddress theirs = GlooAddress.parse(list, index);
            if (!self.connectsTo(theirs)) {
                return accepted.future();
            }
            servers.get(peer < options.rank() ? peer : peer - 1).close();
            return client().connect(theirs.socketAddress().getPort(), theirs.socketAddress().getHostString())
                    .recover(e -> Future.failedFuture(failure("cannot connect to rank " + peer + " at " + theirs
                            + ": " + e.getMessage(), e)))
                    .map(socket -> {
                        context.pair(peer).attach((NetSocketInternal) socket);
                        return null;
                    });
        });
    }

    /**
     * {@code f}, its callbacks run on this group's event loop: the store completes on threads of its own, and the
     * servers, the client and the pairs must all live on the loop.
     */
    private <T> Future<T> here(Future<T> f) {
        Promise<T> p = loop.promise();
        f.onComplete(p);
        return p.future();
    }

    private NetClient client() {
        if (client == null) {
            client = options.vertx().createNetClient(new NetClientOptions().setTcpNoDelay(true)
                    .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, options.setupTimeout().toMillis())));
        }
        return client;
    }

    private String advertisedHost(String bindHost) {
        return ListenAddresses.advertised(options.property("gloo.advertiseHost",
                options.property("tcp.advertiseHost", null)), bindHost, "gloo.advertiseHost");
    }

    /** gethostname(2), which gloo writes under {@code rank_<rank>}. */
    private static String hostName() {
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

    private CommunicationException failure(String why, Throwable cause) {
        return new CommunicationException(options.groupName(), -1, "gloo group '" + options.groupName() + "': rank "
                + options.rank() + " of " + options.worldSize() + " " + why, cause);
    }
}
