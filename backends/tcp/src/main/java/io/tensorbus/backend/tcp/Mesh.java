package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.Store;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.support.ListenAddresses;
import io.tensorbus.spi.support.SecretHandshake;
import io.tensorbus.spi.support.shm.SharedMemoryArea;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the full mesh of one group: listens on a free port, publishes {@code host:port} in the store,
 * checks that every member agrees on the world size and that no rank is taken twice, then connects to
 * every lower rank and accepts every higher one. Each connection first proves the job's secret
 * ({@link SecretHandshake}, channel {@value #CHANNEL}), then starts with a HELLO frame each way that names the
 * group, the rank and the world size; anything else on the port is dropped. Without a secret the mesh
 * listens on loopback addresses only.
 */
final class Mesh {
    private static final System.Logger LOG = System.getLogger(Mesh.class.getName());
    /** How long an accepted connection may take to send its HELLO, by default. */
    private static final long HANDSHAKE_MILLIS = 10_000;
    /** The handshake's name for the connections of the mesh. */
    static final String CHANNEL = "mesh";

    private final BackendOptions options;
    private final ContextInternal context;
    private final VertxInternal vertx;
    private final Store store;
    private final Promise<Backend> result;
    private final TcpBackend backend;
    private final List<Promise<Void>> connected = new ArrayList<>();
    private NetServer server;
    private NetClient client;
    private long deadline = -1;
    /** Per peer: its HELLO was accepted. */
    private final boolean[] helloFrom;
    /** The smallest chunk size of the members seen so far (this rank's own to begin with). */
    private long chunkBytes;
    private final long handshakeMillis;
    /**
     * The shared area while its file still exists (rank 0 waits for the members' answers, a member for the verdict),
     * or null: whoever holds it when set-up fails deletes the file, since the rank that would have may be the one
     * that died.
     */
    private SharedMemoryArea pendingArea;

    private Mesh(BackendOptions options, SharedMemoryOptions sharedMemory, ContextInternal context,
                 Promise<Backend> result) {
        this.options = options;
        this.context = context;
        this.vertx = (VertxInternal) options.vertx();
        this.store = options.store();
        this.result = result;
        this.backend = new TcpBackend(options, sharedMemory, context, this::closeTransport);
        this.chunkBytes = backend.preferredChunkBytes();
        this.helloFrom = new boolean[options.worldSize()];
        for (int p = 0; p < options.worldSize(); p++) {
            connected.add(Promise.promise());
        }
        connected.get(options.rank()).complete();
        this.handshakeMillis = Long.parseLong(options.property("tcp.handshakeMillis",
                String.valueOf(HANDSHAKE_MILLIS)));
    }

    /** Creates the backend of one group; completes when every connection is up. */
    static Future<Backend> create(BackendOptions options) {
        SharedMemoryOptions sharedMemory;
        try {
            options.secret().checkBind(options.property("tcp.bindHost", "127.0.0.1"),
                    "the tcp backend of group '" + options.groupName() + "'");
            sharedMemory = SharedMemoryOptions.of(options);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        ContextInternal context = ((VertxInternal) options.vertx()).createEventLoopContext();
        Promise<Backend> result = context.promise();
        context.runOnContext(v -> new Mesh(options, sharedMemory, context, result).start());
        return result.future();
    }

    private String key(String what, int rank) {
        return "tcp/" + what + "/" + rank;
    }

    private void start() {
        deadline = vertx.setTimer(options.setupTimeout().toMillis(), id -> fail(setupTimeout()));
        String bindHost = options.property("tcp.bindHost", "127.0.0.1");
        server = vertx.createNetServer(new NetServerOptions().setHost(bindHost).setPort(0).setTcpNoDelay(true)
                .setReceiveBufferSize(receiveBufferBytes()));
        server.connectHandler(this::accepted);
        server.listen()
                .recover(e -> Future.failedFuture(initError(backend.who(options.rank()) + " of group '"
                        + options.groupName() + "' cannot listen on " + bindHost + ": " + e.getMessage())))
                .compose(s -> publish(advertisedHost(bindHost) + ":" + s.actualPort() + hostSuffix()))
                .compose(v -> Future.all(checkPeers()))
                .compose(v -> Future.all(new ArrayList<>(connected.stream().map(Promise::future).toList())))
                .compose(v -> sharedArea())
                .onSuccess(v -> ready())
                .onFailure(this::fail);
    }

    private String advertisedHost(String bindHost) {
        return ListenAddresses.advertised(options.property("tcp.advertiseHost", null), bindHost, "tcp.advertiseHost");
    }

    /**
     * What follows the address in the store: " shm=" and this host's shared-memory identity, when this rank
     * uses shared memory, so that a connecting peer on the same host asks for a channel.
     */
    private String hostSuffix() {
        SharedMemoryOptions shm = backend.sharedMemory();
        return shm == null ? "" : " shm=" + shm.hostIdentity();
    }

    private Future<Void> publish(String address) {
        int rank = options.rank();
        return here(store.add(key("claim", rank), 1)).compose(count -> {
            if (count > 1) {
                return Future.failedFuture(initError(backend.who(rank) + " of group '" + options.groupName()
                        + "' was claimed by another process too: two processes were started with the same rank"));
            }
            // The world size, then this rank's chunk size: the group cuts collectives at the smallest.
            String world = options.worldSize() + " " + backend.preferredChunkBytes();
            return here(Future.all(store.set(key("world", rank), utf8(world)),
                    store.set(key("addr", rank), utf8(address))).mapEmpty());
        });
    }

    private List<Future<Void>> checkPeers() {
        List<Future<Void>> checks = new ArrayList<>();
        for (int p = 0; p < options.worldSize(); p++) {
            if (p == options.rank()) {
                continue;
            }
            int peer = p;
            Future<Void> agreed = here(store.get(key("world", peer))).compose(bytes -> {
                String[] fields = new String(bytes, StandardCharsets.UTF_8).trim().split(" ");
                int theirs = Integer.parseInt(fields[0]);
                if (fields.length > 1) {
                    chunkBytes = Math.min(chunkBytes, Long.parseLong(fields[1]));
                }
                if (theirs != options.worldSize()) {
                    return Future.failedFuture(initError("world size mismatch in group '" + options.groupName()
                            + "': " + backend.who(options.rank()) + " has worldSize=" + options.worldSize() + " but "
                            + backend.who(peer) + " has worldSize=" + theirs));
                }
                return Future.succeededFuture();
            });
            checks.add(peer < options.rank() ? agreed.compose(v -> connectTo(peer)) : agreed);
        }
        return checks;
    }

    private Future<Void> connectTo(int peer) {
        client = client != null ? client
                : vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true)
                        .setReceiveBufferSize(receiveBufferBytes())
                        .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, options.setupTimeout().toMillis())));
        boolean[] sameHost = new boolean[1];
        return here(store.get(key("addr", peer))).compose(bytes -> {
            String[] published = new String(bytes, StandardCharsets.UTF_8).split(" ", 2);
            String address = published[0];
            sameHost[0] = published.length > 1 && published[1].equals(hostSuffix().trim());
            int colon = address.lastIndexOf(':');
            return client.connect(Integer.parseInt(address.substring(colon + 1)), address.substring(0, colon));
        }).compose(socket -> greet((NetSocketInternal) socket, peer, sameHost[0]));
    }

    /** Proves the job secret to {@code peer} on its new connection, says HELLO, and waits for its answer. */
    private Future<Void> greet(NetSocketInternal socket, int peer, boolean sameHost) {
        PeerConnection.readAdaptively(socket);
        return SecretHandshake.connect(socket, options.secret(), CHANNEL, Duration.ofMillis(handshakeMillis), vertx)
                .recover(e -> Future.failedFuture(initError(backend.who(peer) + " of group '" + options.groupName()
                        + "' could not be reached: " + e.getMessage())))
                .compose(v -> {
                    handshake(socket, peer, -1, sameHost);
                    socket.write(BufferInternal.buffer(hello(sameHost).encode()));
                    return connected.get(peer).future();
                });
    }

    /**
     * SO_RCVBUF of the group's sockets. A large fixed receive buffer (kernel-capped by net.core.rmem_max)
     * measured 3-4.5 GB/s one way on loopback against 2.2-2.5 with the autotuned default.
     */
    private int receiveBufferBytes() {
        return Integer.parseInt(options.property("tcp.receiveBufferBytes", String.valueOf(8 << 20)));
    }

    /** This rank's HELLO; {@code sharedMemory}: it wants (connector) or offers (acceptor) a channel. */
    private Frame hello(boolean sharedMemory) {
        long aux = ((long) options.rank() << 32) | options.worldSize();
        return new Frame(Frame.HELLO, 0, 0, Frame.NO_REDUCE, -1, -1,
                sharedMemory ? Frame.WANTS_SHARED_MEMORY : 0, 0, 0, backend.groupHash(), 0, aux);
    }

    private void accepted(NetSocket socket) {
        PeerConnection.readAdaptively((NetSocketInternal) socket);
        // A connection that does not prove the secret and say HELLO in time is dropped; the timer stops once
        // it has. A refused one is closed (and logged) by the secret handshake.
        long timer = vertx.setTimer(handshakeMillis, id -> socket.close());
        SecretHandshake.accept(socket, options.secret(), CHANNEL, Duration.ofMillis(handshakeMillis), vertx)
                .onFailure(e -> vertx.cancelTimer(timer))
                .onSuccess(v -> {
                    socket.closeHandler(closed -> vertx.cancelTimer(timer));
                    handshake((NetSocketInternal) socket, -1, timer, false);
                });
    }

    /**
     * Reads the first frame: the peer's HELLO. {@code expected} is -1 on the accepting side, whose handshake
     * deadline is {@code timer}; {@code wantsChannel}: this connecting rank asked for shared memory. Any other
     * first frame, or bytes that are no frame, drop the connection.
     */
    private void handshake(NetSocketInternal socket, int expected, long timer, boolean wantsChannel) {
        FrameReader reader = new FrameReader(null);
        PeerConnection[] handedOver = new PeerConnection[1];
        reader.listener(new FrameReader.Listener() {
            @Override
            public Sink onHeader(Frame f) {
                if (f.kind() != Frame.HELLO) {
                    // Refuse at the header: a payload must not be held for a stranger.
                    throw new Frame.MalformedFrameException("a frame of kind " + f.kind() + " before the HELLO");
                }
                return null;
            }

            @Override
            public void onFrame(Frame f, Sink sink) {
                int peer = helloPeer(f, expected);
                if (timer >= 0) {
                    vertx.cancelTimer(timer);
                }
                SharedMemoryChannel offered = null;
                if (expected < 0) {
                    offered = (f.tag() & Frame.WANTS_SHARED_MEMORY) != 0 ? offerChannel(peer) : null;
                    socket.write(BufferInternal.buffer(hello(offered != null).encode()));
                    if (offered != null) {
                        byte[] offer = offered.offer();
                        Frame header = new Frame(Frame.SHM_OFFER, 0, 0, Frame.NO_REDUCE, -1, -1, 0, 0, 0,
                                backend.groupHash(), offer.length, 0);
                        socket.write(BufferInternal.buffer(Unpooled
                                .wrappedBuffer(header.encode(), Unpooled.wrappedBuffer(offer))));
                    }
                }
                boolean offerDue = wantsChannel && (f.tag() & Frame.WANTS_SHARED_MEMORY) != 0;
                PeerConnection c = new PeerConnection(backend, peer, socket, reader, offered, offerDue);
                backend.attach(c);
                c.start();
                handedOver[0] = c;
                c.ready().onComplete(ar -> {
                    if (ar.succeeded()) {
                        connected.get(peer).tryComplete();
                    } else {
                        connected.get(peer).tryFail(initError(backend.who(peer) + " of group '" + options.groupName()
                                + "' was lost during set-up: " + ar.cause().getMessage()));
                    }
                });
            }
        });
        socket.messageHandler(message -> {
            if (!(message instanceof ByteBuf buf)) {
                return;
            }
            try {
                reader.feed(buf);
            } catch (RuntimeException e) {
                if (handedOver[0] != null) {
                    // The frames behind the HELLO in the same read belong to the established connection.
                    backend.peerLost(handedOver[0].peer(), "it sent a malformed frame (" + e.getMessage() + ")", e);
                    handedOver[0].close();
                    return;
                }
                LOG.log(System.Logger.Level.DEBUG, "dropped a connection to group '" + options.groupName()
                        + "' on " + backend.who(options.rank()) + ": " + e.getMessage());
                socket.close();
                if (expected >= 0) {
                    connected.get(expected).tryFail(initError(backend.who(expected) + " answered the handshake with "
                            + e.getMessage()));
                }
            } finally {
                buf.release();
            }
        });
        if (expected >= 0) {
            socket.closeHandler(v -> connected.get(expected).tryFail(initError(backend.who(expected)
                    + " closed the connection during the handshake")));
        }
    }

    /** A channel to offer {@code peer}, which asked for one; null (said once) when this host cannot make it. */
    private SharedMemoryChannel offerChannel(int peer) {
        SharedMemoryOptions shm = backend.sharedMemory();
        if (shm == null) {
            return null;
        }
        try {
            return SharedMemoryChannel.create(shm.dir(), shm.ringBytes());
        } catch (IOException | RuntimeException e) {
            backend.sharedMemoryFallback(peer, "no channel could be made in " + shm.dir() + ": " + e.getMessage());
            return null;
        }
    }

    private int helloPeer(Frame f, int expected) {
        if (f.kind() != Frame.HELLO || f.groupHash() != backend.groupHash()) {
            throw new Frame.MalformedFrameException("a frame of kind " + f.kind() + " for group hash "
                    + f.groupHash() + " instead of this group's HELLO");
        }
        int peer = (int) (f.aux() >>> 32);
        int world = (int) f.aux();
        if (world != options.worldSize()) {
            throw new Frame.MalformedFrameException("rank " + peer + " has worldSize=" + world + ", this rank has "
                    + options.worldSize());
        }
        boolean valid = expected >= 0 ? peer == expected
                : peer > options.rank() && peer < options.worldSize() && !helloFrom[peer];
        if (!valid) {
            throw new Frame.MalformedFrameException("HELLO from rank " + peer + " is not expected here");
        }
        // Once per peer, also while its shared-memory set-up is still under way.
        helloFrom[peer] = true;
        return peer;
    }

    /**
     * Sets up the collectives' area that every member maps when all are on one host (each has a shared-memory link
     * with rank 0): rank 0 offers a file through the store, each member says whether it mapped it, and rank 0
     * tells all whether the group uses it, so that every member takes the same path. Rank 0 always answers;
     * a member without shared memory cannot have been offered one and does not ask.
     */
    private Future<Void> sharedArea() {
        int rank = options.rank();
        if (rank == 0) {
            SharedMemoryArea area = offerArea();
            pendingArea = area;
            return here(store.set(key("area", 0), area == null ? new byte[] {'-'} : area.offer()))
                    .compose(v -> area == null ? Future.succeededFuture() : collectAnswers(area));
        }
        SharedMemoryOptions shm = backend.sharedMemory();
        if (shm == null) {
            return Future.succeededFuture();
        }
        return here(store.get(key("area", 0))).compose(offer -> {
            if (offer.length <= 1) {
                return Future.succeededFuture();
            }
            SharedMemoryArea area = shm.allReduce() ? acceptArea(shm, offer) : null;
            pendingArea = area;
            return here(store.set(key("areaMapped", rank), new byte[] {(byte) (area != null ? '1' : '0')}))
                    .compose(v -> here(store.get(key("areaOn", 0))))
                    .map(on -> {
                        pendingArea = null;
                        useArea(area, on.length == 1 && on[0] == '1');
                        return null;
                    });
        });
    }

    /** Rank 0's area, when every peer shares its host and the group's settings allow one; else null. */
    private SharedMemoryArea offerArea() {
        SharedMemoryOptions shm = backend.sharedMemory();
        if (shm == null || !shm.allReduce() || options.worldSize() < 2) {
            return null;
        }
        for (int p = 1; p < options.worldSize(); p++) {
            if (!backend.connection(p).sharedMemory()) {
                return null;
            }
        }
        try {
            return SharedMemoryArea.create(shm.dir(), options.worldSize(), shm.sliceBytes());
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "group '" + options.groupName() + "' all-reduces through its "
                    + "links instead of a shared area: none could be made in " + shm.dir() + ": " + e.getMessage());
            return null;
        }
    }

    private SharedMemoryArea acceptArea(SharedMemoryOptions shm, byte[] offer) {
        try {
            return SharedMemoryArea.accept(shm.dir(), offer, options.worldSize());
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "group '" + options.groupName() + "' on "
                    + backend.who(options.rank()) + " could not map the shared all-reduce area: " + e.getMessage());
            return null;
        }
    }

    /** Rank 0 learns whether every member mapped its area, deletes the file, and tells all the verdict. */
    private Future<Void> collectAnswers(SharedMemoryArea area) {
        List<String> keys = new ArrayList<>();
        for (int p = 1; p < options.worldSize(); p++) {
            keys.add(key("areaMapped", p));
        }
        return here(store.multiGet(keys)).compose(answers -> {
            area.unlink();
            pendingArea = null;
            boolean all = answers.stream().allMatch(a -> a.length == 1 && a[0] == '1');
            useArea(area, all);
            return here(store.set(key("areaOn", 0), new byte[] {(byte) (all ? '1' : '0')}));
        });
    }

    private void useArea(SharedMemoryArea area, boolean on) {
        if (area == null) {
            return;
        }
        if (!on || result.future().isComplete()) {
            // Off, or set-up already failed (its deadline passed while the store answered): nothing may start.
            area.close();
            return;
        }
        SharedMemoryOptions shm = backend.sharedMemory();
        backend.useSharedCollectives(new SharedMemoryCollectives(backend, area, shm.spinNanos(),
                shm.waitSpinNanos(), options.timeout().toNanos(), shm.inProcess()));
    }

    private void ready() {
        vertx.cancelTimer(deadline);
        backend.agreeChunkBytes(chunkBytes);
        result.tryComplete(backend);
    }

    private void fail(Throwable cause) {
        vertx.cancelTimer(deadline);
        if (pendingArea != null) {
            pendingArea.unlink();
            pendingArea.close();
            pendingArea = null;
        }
        if (result.tryFail(cause)) {
            backend.close();
        }
    }

    private CommunicationException setupTimeout() {
        List<Integer> missing = new ArrayList<>();
        for (int p = 0; p < connected.size(); p++) {
            if (!connected.get(p).future().isComplete()) {
                missing.add(p);
            }
        }
        return initError("set-up of group '" + options.groupName() + "' timed out after " + options.setupTimeout()
                + " on " + backend.who(options.rank()) + ": ranks " + missing + " never connected");
    }

    private CommunicationException initError(String message) {
        return new CommunicationException(options.groupName(), -1, message, null);
    }

    private void closeTransport() {
        if (server != null) {
            server.close();
        }
        if (client != null) {
            client.close();
        }
    }

    /**
     * {@code f}, completing on this group's context. A store completes its futures on whatever thread answers
     * (its own connection's event loop, or the thread of the rank that set a key): continuing there would
     * open the connections, and so run every frame handler of the group, on a foreign event loop, racing with
     * the group's own (the router, the readers and the park timers assume one thread).
     */
    private <T> Future<T> here(Future<T> f) {
        Promise<T> p = context.promise();
        f.onComplete(p);
        return p.future();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
