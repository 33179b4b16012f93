package io.tensorbus.backend.gloo;

import io.tensorbus.spi.BackendOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo 5b14351's {@code connectFullMesh} (PyTorch 1.13, Debian's {@code libgloo0}): every rank writes its host
 * name under {@code 0/rank_<rank>} and, under {@code 0/<rank>}, one listening address per peer in rank order (a
 * listening socket per pair); then each pair connects, the side with the greater address dialing, with no handshake.
 */
final class PerPairRendezvous extends GlooRendezvous {
    private final List<Promise<Void>> acceptedFrom = new ArrayList<>();

    PerPairRendezvous(BackendOptions options, ContextInternal loop) {
        super(options, loop);
    }

    @Override
    Future<Void> mesh(String bindHost, String advertised) {
        return here(store.set(PREFIX + "rank_" + options.rank(), hostName().getBytes(StandardCharsets.UTF_8)))
                .compose(v -> listen(bindHost, advertised))
                .compose(this::publish)
                .compose(this::connectAll);
    }

    /** One listening socket per peer, in rank order; completes with their addresses. */
    private Future<List<GlooAddress>> listen(String bindHost, String advertised) {
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
                pairs.add(connect(peer, own.get(index), acceptedFrom.get(index), servers.get(index)));
                index++;
            }
        }
        return Future.all(pairs).mapEmpty();
    }

    /** Connects the pair with {@code peer} once its addresses are in the store: dials it, or waits to be dialed. */
    private Future<Void> connect(int peer, GlooAddress self, Promise<Void> accepted, NetServer server) {
        int index = options.rank() > peer ? options.rank() - 1 : options.rank();
        return here(store.get(PREFIX + peer)).compose(list -> {
            GlooAddress theirs = GlooAddress.parse(list, index);
            if (!self.connectsTo(theirs)) {
                return accepted.future();
            }
            server.close();
            return dial(peer, theirs).map(socket -> {
                context.pair(peer).attach(socket);
                return null;
            });
        });
    }
}
