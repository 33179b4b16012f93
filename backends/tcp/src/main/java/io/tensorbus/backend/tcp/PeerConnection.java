package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoop;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.support.LingeringClose;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.tensorbus.spi.support.shm.SharedMemoryLink;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.net.NetSocketInternal;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * The connection to one member of the group, after the handshake: writes frames (the payload straight from
 * the tensor's off-heap memory) and reads them, handing data to the {@link Router} and control frames to
 * the backend. Runs on the group's event loop.
 *
 * <p>With a peer on the same host the frames go through a {@link SharedMemoryLink} instead, once the two have
 * agreed on a channel (the accepting rank offers one right after its HELLO, the other answers): the socket then
 * carries only doorbells, and its closing still says that the peer is gone. {@link #ready} completes once that
 * is settled either way.
 */
final class PeerConnection implements FrameReader.Listener {
    /** How long a parked payload waits for its receive before it is copied aside, in milliseconds. */
    static final long PARK_MILLIS = 20;
    /** How long a leaving rank waits for its peer to close after its own FIN, in milliseconds. */
    static final long LINGER_MILLIS = 1000;
    /** Early payloads larger than this are never copied aside; they wait parked for their receive. */
    static final long MAX_EARLY_COPY_BYTES = Long.getLong("tensorbus.tcp.maxEarlyCopyBytes", 1L << 30);

    private final TcpBackend backend;
    private final int peer;
    private final NetSocketInternal socket;
    private final FrameReader reader;
    private Router.Early parked;
    private long parkTimer = -1;
    private final Promise<Void> ready = Promise.promise();
    /** The channel this side offered, until the peer answers. */
    private SharedMemoryChannel offered;
    /** True while the peer's HELLO announced a SHM_OFFER that has not come yet. */
    private boolean offerDue;
    /** Set once on the event loop, read by callers' threads for {@link #tryWriteNow}. */
    private volatile SharedMemoryLink link;
    /** The reader of the link's incoming ring, set with {@link #link}. */
    private FrameReader linkReader;

    /**
     * Takes over {@code socket} and its reader from the handshake (frames may already be behind the hello).
     * {@code offered} is the channel this side just offered (or null); {@code offerDue} says that the peer
     * will offer one.
     */
    PeerConnection(TcpBackend backend, int peer, NetSocketInternal socket, FrameReader reader,
                   SharedMemoryChannel offered, boolean offerDue) {
        this.backend = backend;
        this.peer = peer;
        this.socket = socket;
        this.reader = reader;
        this.offered = offered;
        this.offerDue = offerDue;
        reader.listener(this);
        if (offered == null && !offerDue) {
            ready.complete();
        }
    }

    /** Completes once the connection is usable: the shared-memory offer, if any, was answered. */
    Future<Void> ready() {
        return ready.future();
    }

    /** An operation started that waits for data: a shared-memory link polls for it. */
    void expectData() {
        if (link != null) {
            link.expect();
        }
    }

    /**
     * Writes a whole frame into shared memory on the calling thread when the link can take it at once; false
     * when it cannot (no link, frames queued before it, no room), and nothing was written. Any thread.
     */
    boolean tryWriteNow(Frame header, MemorySegment payload) {
        SharedMemoryLink l = link;
        return l != null && l.tryWriteNow(parts(header, payload));
    }

    /**
     * Polls the shared-memory link on the calling thread for up to {@code patienceNanos} and takes the peer's
     * next frame into {@code buffer} when it is a point-to-point message with {@code tag} that fits it, while
     * {@code mayTake} holds; false when nothing was taken (no link, another frame first, or no message in time).
     */
    boolean tryReceiveNow(DeviceBuffer buffer, int tag, long patienceNanos, BooleanSupplier mayTake) {
        SharedMemoryLink l = link;
        MemorySegment into = buffer.segment();
        return l != null && l.pollOnCallerThread(patienceNanos, Frame.HEADER_BYTES,
                header -> isMessageFor(header, buffer, tag) ? into : null, mayTake);
    }

    /**
     * True when {@code header} starts a point-to-point message of this group that a receive of {@code buffer} takes.
     */
    private boolean isMessageFor(MemorySegment header, DeviceBuffer buffer, int tag) {
        Frame f;
        try {
            f = Frame.decode(Unpooled.wrappedBuffer(header.asByteBuffer()));
        } catch (Frame.MalformedFrameException e) {
            return false; // the event loop reads it and loses the peer, naming why
        }
        return f.kind() == Frame.DATA && f.isPointToPoint() && f.groupHash() == backend.groupHash()
                && f.tag() == tag && f.dtype() == buffer.dtype().ordinal() && f.payloadBytes() == buffer.byteSize();
    }

    /** What the shared-memory link to this peer holds (for a stall report), or null when nothing or no link. */
    String sharedMemoryState() {
        SharedMemoryLink l = link;
        String state = l == null ? null : l.state();
        return state == null ? null : "shared memory with " + backend.who(peer) + ": " + state;
    }

    /** The shared-memory link to this peer, or null when frames go over TCP. Any thread. */
    SharedMemoryLink sharedMemoryLink() {
        return link;
    }

    /** True when frames go through shared memory. */
    boolean sharedMemory() {
        return link != null;
    }

    /**
     * Makes Netty read {@code socket} into buffers that adapt to what arrives (512 B up to 8 MiB, growing while reads
     * fill them). Vert.x reads a socket with a receive buffer size into buffers of that size (8 MiB here), allocated
     * afresh for every read: a doorbell or a 4-byte message paid for 8 MiB. Netty fixes a channel's read handle at
     * its first read, so this is called on a new connection before the secret handshake reads it; set later, it
     * changes nothing.
     */
    static void readAdaptively(NetSocketInternal socket) {
        socket.channelHandlerContext().channel().config().setRecvByteBufAllocator(
                new AdaptiveRecvByteBufAllocator(512, 64 * 1024, 8 << 20));
    }

    /** The size of the next buffer Netty reads this socket into, for tests. */
    int nextReadBytes() {
        return socket.channelHandlerContext().channel().unsafe().recvBufAllocHandle().guess();
    }

    /** The group rank at the other end. */
    int peer() {
        return peer;
    }

    /** The event loop this connection's handlers run on (the group's own, see {@code Mesh#here}). */
    EventLoop eventLoop() {
        return socket.channelHandlerContext().channel().eventLoop();
    }

    /** Starts reading; the handshake already consumed its frames. */
    void start() {
        socket.messageHandler(this::handle);
        socket.closeHandler(v -> {
            readWhatIsLeft();
            ready.tryFail(new IOException("the connection closed while setting up shared memory"));
            backend.peerLost(peer, "the connection closed", null);
        });
        socket.exceptionHandler(e -> {
            readWhatIsLeft();
            backend.peerLost(peer, "the connection failed: " + e.getMessage(), e);
        });
    }

    /**
     * The socket ended: reads everything the peer wrote into shared memory before it closed (a GOODBYE, an
     * ABORT, data of sends it completed), copying aside payloads that wait for their receives, as TCP's own
     * bytes would still be read; then writes fail as they would on the closed socket.
     */
    private void readWhatIsLeft() {
        SharedMemoryLink l = link;
        if (l == null) {
            return;
        }
        // Each round consumes at least the parked frame, so the ring's finite contents bound the loop. A caller's
        // thread may be polling the ring for its receive right now: what is left is this loop's to read all the same.
        l.drainRemaining();
        while (parked != null) {
            Router.Early e = parked;
            cancelParkTimer();
            parked = null;
            resumeReading(backend.router().unpark(e));
            l.drainRemaining();
        }
        closeSharedMemory();
    }

    /** Writes a header and its payload; completes once the bytes are in the kernel. */
    Future<Void> write(Frame header, MemorySegment payload) {
        return link != null ? link.write(parts(header, payload)) : writeToSocket(header, payload);
    }

    /** A frame as the link writes it: the encoded header, then the payload if there is one. */
    private static MemorySegment[] parts(Frame header, MemorySegment payload) {
        ByteBuf h = header.encode();
        MemorySegment bytes = MemorySegment.ofArray(new byte[Frame.HEADER_BYTES]);
        MemorySegment.copy(MemorySegment.ofBuffer(h.nioBuffer()), 0, bytes, 0, Frame.HEADER_BYTES);
        h.release();
        return payload == null || payload.byteSize() == 0 ? new MemorySegment[] {bytes}
                : new MemorySegment[] {bytes, payload};
    }

    private Future<Void> writeToSocket(Frame header, MemorySegment payload) {
        ByteBuf h = header.encode();
        if (payload == null || payload.byteSize() == 0) {
            return socket.writeMessage(h);
        }
        return socket.writeMessage(Unpooled.wrappedBuffer(h, Unpooled.wrappedBuffer(byteBuffer(payload))));
    }

    /** Off-heap and byte[] memory is sent in place; other heap arrays (long[], ...) have no byte view. */
    private static ByteBuffer byteBuffer(MemorySegment payload) {
        if (payload.isNative() || payload.heapBase().map(a -> a instanceof byte[]).orElse(false)) {
            return payload.asByteBuffer();
        }
        return ByteBuffer.wrap(payload.toArray(ValueLayout.JAVA_BYTE));
    }

    /** Closes the socket (pending writes are dropped) and unmaps the shared memory. */
    void close() {
        reader.discard();
        closeSharedMemory();
        socket.close();
    }

    private void closeSharedMemory() {
        if (offered != null) {
            offered.unlink();
            offered.close();
            offered = null;
        }
        if (link != null) {
            link.close(new IOException("the connection to " + backend.who(peer) + " closed"));
        }
    }

    /** Says goodbye (this rank called {@code collectives} collectives, all finished), then closes. */
    Future<Void> leave(long collectives) {
        Frame bye = new Frame(Frame.GOODBYE, 0, 0, Frame.NO_REDUCE, -1, -1, 0, 0, 0, backend.groupHash(), 0,
                collectives);
        return write(bye, null).transform(written -> {
            if (written.failed()) {
                close();
                return Future.succeededFuture();
            }
            return drainThenClose();
        });
    }

    /**
     * Half-closes (a FIN behind what was written), reads and drops what the peer still sends, and closes once
     * the peer has closed too, or after {@link #LINGER_MILLIS}. Closing with unread bytes would make the kernel
     * reset the connection, which drops the GOODBYE and ABORT still queued here and what the peer has not read
     * yet: a peer still sending into a collective would then see only a reset, not why this rank left.
     */
    private Future<Void> drainThenClose() {
        cancelParkTimer();
        parked = null;
        reader.discard();
        // What this rank wrote into the ring stays readable through the peer's own mapping.
        closeSharedMemory();
        return LingeringClose.close(socket, LINGER_MILLIS);
    }

    /** The parked payload's receive was posted: stream the payload into {@code sink}. */
    void resume(Sink sink) {
        cancelParkTimer();
        parked = null;
        backend.context().runOnContext(v -> resumeReading(sink));
    }

    /**
     * Hands the parked payload to {@code sink} and lets the held bytes through; reading from the socket starts
     * again only if no later payload parked on the way (that one holds the connection in turn).
     */
    private void resumeReading(Sink sink) {
        FrameReader r = link != null ? linkReader : reader;
        if (!guarded(() -> r.resume(sink))) {
            return;
        }
        if (link != null) {
            link.wake();
        } else if (!reader.isParked()) {
            socket.channelHandlerContext().channel().config().setAutoRead(true);
        }
    }

    private void handle(Object message) {
        if (!(message instanceof ByteBuf buf)) {
            return;
        }
        try {
            guarded(() -> reader.feed(buf));
        } finally {
            buf.release();
        }
    }

    /**
     * Runs a step of the reader; a malformed frame (or any failure while dispatching frames) loses the peer:
     * the group fails and the connection closes. Returns false when that happened.
     */
    boolean guarded(Runnable step) {
        try {
            step.run();
            return true;
        } catch (Frame.MalformedFrameException e) {
            backend.peerLost(peer, "it sent a malformed frame (" + e.getMessage() + ")", e);
        } catch (RuntimeException e) {
            backend.peerLost(peer, "its frames could not be processed (" + e + ")", e);
        }
        close();
        return false;
    }

    @Override
    public Sink onHeader(Frame frame) {
        return switch (frame.kind()) {
            case Frame.DATA -> data(frame);
            case Frame.STATUS_REQUEST -> {
                write(backend.statusReply(frame), null);
                yield null;
            }
            case Frame.STATUS_REPLY -> {
                backend.statusArrived(peer, frame);
                yield null;
            }
            case Frame.GOODBYE -> {
                backend.peerDeparting(peer, frame.aux());
                yield null;
            }
            case Frame.DOORBELL -> {
                if (link != null) {
                    link.wake();
                }
                yield null;
            }
            case Frame.SHM_OFFER -> offerArrived(frame);
            case Frame.SHM_ANSWER -> {
                answerArrived(frame.aux() == 1);
                yield null;
            }
            case Frame.ABORT -> {
                byte[] text = new byte[(int) frame.payloadBytes()];
                Sink s = Sink.copyInto(MemorySegment.ofArray(text));
                long reason = frame.aux();
                s.whenFull = () -> backend.abortArrived(peer, reason,
                        new String(text, StandardCharsets.UTF_8));
                yield s;
            }
            default -> throw new Frame.MalformedFrameException("unexpected frame kind " + frame.kind()
                    + " after the handshake");
        };
    }

    @Override
    public void onFrame(Frame frame, Sink sink) {
        // Completion runs through the sink's whenFull; nothing else to do per frame.
    }

    /** The peer offers a channel: map it and say so, or decline (and stay on the socket). */
    private Sink offerArrived(Frame frame) {
        if (!offerDue) {
            throw new Frame.MalformedFrameException("a shared-memory offer that was not announced");
        }
        offerDue = false;
        byte[] offer = new byte[(int) frame.payloadBytes()];
        Sink s = Sink.copyInto(MemorySegment.ofArray(offer));
        s.whenFull = () -> {
            SharedMemoryChannel channel = null;
            try {
                channel = SharedMemoryChannel.accept(backend.sharedMemory().dir(), offer);
            } catch (IOException e) {
                backend.sharedMemoryFallback(peer, "its channel could not be mapped: " + e.getMessage());
            }
            writeToSocket(new Frame(Frame.SHM_ANSWER, 0, 0, Frame.NO_REDUCE, -1, -1, 0, 0, 0,
                    backend.groupHash(), 0, channel != null ? 1 : 0), null);
            if (channel != null) {
                startLink(channel);
            }
            ready.tryComplete();
        };
        return s;
    }

    /** The peer answered this side's offer: the file goes (mapped or not), and the link starts if it mapped it. */
    private void answerArrived(boolean accepted) {
        SharedMemoryChannel channel = offered;
        if (channel == null) {
            throw new Frame.MalformedFrameException("a shared-memory answer to no offer");
        }
        offered = null;
        channel.unlink();
        if (accepted) {
            startLink(channel);
        } else {
            channel.close();
        }
        ready.tryComplete();
    }

    private void startLink(SharedMemoryChannel channel) {
        Frame doorbell = new Frame(Frame.DOORBELL, 0, 0, Frame.NO_REDUCE, -1, -1, 0, 0, 0, backend.groupHash(), 0, 0);
        linkReader = new FrameReader(this);
        link = new SharedMemoryLink(channel, linkReader, eventLoop(), () -> writeToSocket(doorbell, null),
                backend.sharedMemory().polling(), backend::awaitsData, this::guarded);
        // The peer may have written already (it starts as soon as it has answered).
        link.poll();
    }

    private Sink data(Frame frame) {
        if (frame.groupHash() != backend.groupHash()) {
            throw new Frame.MalformedFrameException("frame of another group (hash " + frame.groupHash() + ")");
        }
        Sink s = backend.arrived(this, frame);
        if (s == null) {
            park(frame);
        }
        return s;
    }

    private void park(Frame frame) {
        if (link == null) {
            socket.channelHandlerContext().channel().config().setAutoRead(false);
        }
        parked = backend.router().lastEarly();
        Router.Early e = parked;
        if (frame.payloadBytes() > MAX_EARLY_COPY_BYTES) {
            // Too large to copy aside (a header from a broken or hostile peer may announce up to 1 TiB):
            // it waits parked for its receive, and the operations' deadlines bound the wait.
            return;
        }
        parkTimer = backend.vertx().setTimer(PARK_MILLIS, id -> {
            parkTimer = -1;
            if (parked == e) {
                parked = null;
                resumeReading(backend.router().unpark(e));
            }
        });
    }

    private void cancelParkTimer() {
        if (parkTimer >= 0) {
            backend.vertx().cancelTimer(parkTimer);
            parkTimer = -1;
        }
    }
}
