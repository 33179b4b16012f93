package io.tensorbus.backend.gloo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tensorbus.spi.BackendOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo's rendezvous from 6d8b511 on (PyTorch 2.2 and later; gloo 31b1f02's one listening socket per device, and
 * {@code tcp::Context::createAndConnectAllPairs}): the group listens once; every rank writes one {@link RankInfo}
 * under {@code 0/<rank>} with its host name, that socket's address and, per rank, the sequence number the pair with
 * that rank answers to (here the rank itself, as a fresh gloo device counts its pairs from 0 in rank order, itself
 * included). For each pair the side with the greater address dials the other's socket and first writes the sequence
 * number the other published for it, as a native {@code ssize_t}; the listening side reads those eight bytes and hands
 * the connection to that pair.
 */
final class ListenerRendezvous extends GlooRendezvous {
    /** The bytes of a sequence number ({@code sequence_number_t}, an {@code ssize_t}). */
    static final int SEQ_BYTES = 8;
    private static final System.Logger LOG = System.getLogger(ListenerRendezvous.class.getName());

    /** Per rank, completed once that rank's pair has dialed this rank's socket and named itself. */
    private final List<Promise<Void>> dialedBy = new ArrayList<>();

    ListenerRendezvous(BackendOptions options, ContextInternal loop) {
        super(options, loop);
        for (int i = 0; i < options.worldSize(); i++) {
            dialedBy.add(Promise.promise());
        }
    }

    @Override
    Future<Void> mesh(String bindHost, String advertised) {
        NetServer server = options.vertx().createNetServer(new NetServerOptions().setHost(bindHost).setPort(0)
                .setTcpNoDelay(true));
        servers.add(server);
        server.connectHandler(socket -> readSeq((NetSocketInternal) socket));
        return server.listen()
                .map(s -> GlooAddress.of(new InetSocketAddress(advertised, s.actualPort())))
                .compose(own -> publish(own).map(v -> own))
                .compose(this::connectAll);
    }

    /** This rank's {@link RankInfo}: the sequence number of its pair with rank {@code i} is {@code i}. */
    private Future<Void> publish(GlooAddress own) {
        long[] seqs = new long[options.worldSize()];
        for (int i = 0; i < seqs.length; i++) {
            seqs[i] = i;
        }
        return here(store.set(PREFIX + options.rank(), new RankInfo(hostName(), own, seqs).bytes()));
    }

    private Future<Void> connectAll(GlooAddress own) {
        List<Future<Void>> pairs = new ArrayList<>();
        for (int peer = 0; peer < options.worldSize(); peer++) {
            if (peer != options.rank()) {
                pairs.add(connect(peer, own.withSeq(peer)));
            }
        }
        return Future.all(pairs).mapEmpty();
    }

    /** Connects the pair with {@code peer} once its record is in the store: dials it, or waits to be dialed. */
    private Future<Void> connect(int peer, GlooAddress self) {
        return here(store.get(PREFIX + peer)).compose(bytes -> {
            RankInfo theirs = RankInfo.parse(bytes, options.worldSize());
            GlooAddress remote = theirs.address().withSeq(theirs.seqFor(options.rank()));
            if (!self.connectsTo(remote)) {
                return dialedBy.get(peer).future();
            }
            if (!dialedBy.get(peer).tryComplete()) {
                return Future.failedFuture(failure("was dialed by a connection naming its pair with rank " + peer
                        + ", which by gloo's rule this rank dials itself", null));
            }
            return dial(peer, remote).map(socket -> {
                socket.write(Buffer.buffer(SEQ_BYTES).appendLongLE(remote.seq()));
                context.pair(peer).attach(socket);
                return null;
            });
        });
    }

    /**
     * Reads the sequence number a dialing pair writes first, then hands it the connection and what came behind; a
     * connection that names no pair within the set-up timeout is closed.
     */
    private void readSeq(NetSocketInternal socket) {
        InPlaceReads.install(socket); // before the first read, which fixes the channel's read handle
        ByteBuf head = Unpooled.buffer(SEQ_BYTES);
        long silent = options.vertx().setTimer(options.setupTimeout().toMillis(), id -> socket.close());
        socket.messageHandler(message -> {
            if (!(message instanceof ByteBuf in)) {
                return;
            }
            head.writeBytes(in, Math.min(in.readableBytes(), head.writableBytes()));
            if (head.isWritable()) {
                in.release();
                return;
            }
            options.vertx().cancelTimer(silent);
            long seq = head.getLongLE(0);
            if (seq < 0 || seq >= options.worldSize() || seq == options.rank()
                    || !dialedBy.get((int) seq).tryComplete()) {
                LOG.log(System.Logger.Level.WARNING, "gloo group ''{0}'': rank {1} closes a connection from {2} that"
                        + " named pair {3}, which is no peer of its or was already dialed", options.groupName(),
                        options.rank(), socket.remoteAddress(), seq);
                in.release();
                socket.close();
                return;
            }
            context.pair((int) seq).attach(socket, in);
        });
    }
}
