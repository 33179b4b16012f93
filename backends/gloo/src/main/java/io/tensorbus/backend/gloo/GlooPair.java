package io.tensorbus.backend.gloo;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.spi.support.LingeringClose;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.net.NetSocketInternal;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * One connection of a gloo context, to one peer ({@code tcp::Pair}): the notices and data of unbound buffers. A send
 * announces itself with NOTIFY_SEND_READY and writes its data once the peer's NOTIFY_RECV_READY for the slot has
 * come; a receive announces itself with NOTIFY_RECV_READY and takes the next data of its slot. Both are first in,
 * first out per slot. Everything here runs on the context's event loop.
 */
final class GlooPair {
    /** Payloads from this size up are read into the receive's memory; smaller ones are copied out of Netty's. */
    static final long IN_PLACE_MIN = 64 * 1024;
    /** How long a closing connection reads and drops what the peer still sends, in milliseconds. */
    private static final long LINGER_MILLIS = 1000;
    private final GlooContext context;
    private final int peer;
    private final Map<Long, SlotQueue> slots = new HashMap<>();
    private final ByteBuf header = Unpooled.buffer(Preamble.BYTES, Preamble.BYTES);
    private NetSocketInternal socket;
    /** The data being read: its receive (null while skipping a refused payload) and how far it got. */
    private Transfer reading;
    private long readingSlot;
    private long payloadLeft = -1;
    private long filled;
    /** Set when the peer's connection ended with nothing owed either way: what a later operation here fails with. */
    private PeerLostException ended;
    /** The receive's own memory, handed to Netty to read the payload into, until it comes back; else null. */
    private ByteBuf inPlace;
    private long bytesInPlace;

    GlooPair(GlooContext context, int peer) {
        this.context = context;
        this.peer = peer;
    }

    /** A posted send or receive: the bytes and what completes when they are written or filled. */
    record Transfer(MemorySegment bytes, Promise<Void> done) {
    }

    /** What one slot owes and is owed on this pair (gloo's local pending ops and the context's tallies). */
    private static final class SlotQueue {
        final ArrayDeque<Transfer> sends = new ArrayDeque<>();
        final ArrayDeque<Transfer> recvs = new ArrayDeque<>();
        /** The peer's receive notices not yet answered by a send here. */
        int remoteRecvs;
        /** The peer's send notices not yet matched by a receive here. */
        int remoteSends;
        /** Receives posted here before the peer's send notice for them came. */
        int expectedSendNotices;

        boolean idle() {
            return sends.isEmpty() && recvs.isEmpty() && remoteRecvs == 0 && remoteSends == 0
                    && expectedSendNotices == 0;
        }
    }

    int peer() {
        return peer;
    }

    /** Takes over the connected socket and starts reading it. */
    void attach(NetSocketInternal connected) {
        attach(connected, null);
    }

    /**
     * Takes over the connected socket and starts reading it, {@code first} (the bytes that came behind a handshake
     * the caller read, or null) before the rest; takes ownership of {@code first}.
     */
    void attach(NetSocketInternal connected, ByteBuf first) {
        this.socket = connected;
        InPlaceReads.install(connected).feed(this);
        connected.messageHandler(message -> {
            if (message instanceof ByteBuf buf) {
                arrived(buf);
            }
        });
        connected.closeHandler(v -> ended("its connection closed", null));
        connected.exceptionHandler(e -> ended("its connection failed: " + e.getMessage(), e));
        if (first != null) {
            arrived(first);
        }
    }

    /**
     * The peer's connection ended. gloo fails only what was posted on that pair: a peer that finished its last
     * collective closes while this rank may still pass that collective's data on to other ranks, and that must not
     * fail. So a pair that owes nothing either way is only marked, and the next operation on it breaks the context;
     * one with a send, a receive, a notice or a message half-read outstanding breaks it now.
     */
    private void ended(String why, Throwable cause) {
        if (ended != null || context.broken() != null) {
            return;
        }
        if (owesNothing() && !context.waitsOnAnyOf(peer)) {
            ended = context.lost(peer, why + " after its last message here", cause);
        } else {
            context.peerFailed(peer, why, cause);
        }
    }

    /** Why the peer's connection ended, when it ended owing nothing; else null. */
    PeerLostException ended() {
        return ended;
    }

    /** No operation, notice or message is outstanding between this rank and the peer. */
    private boolean owesNothing() {
        return payloadLeft < 0 && header.writerIndex() == 0 && slots.values().stream().allMatch(SlotQueue::idle);
    }

    private void arrived(ByteBuf buf) {
        if (context.broken() != null) {
            buf.release();
            return;
        }
        try {
            feed(buf);
        } catch (RuntimeException e) {
            context.peerFailed(peer, "it broke gloo's framing (" + e.getMessage() + ")", e);
        } finally {
            buf.release();
        }
    }

    /** Posts a send of {@code bytes} on {@code slot}; completes once they are written to the socket. */
    Future<Void> send(long slot, MemorySegment bytes) {
        SlotQueue q = queue(slot);
        Transfer t = new Transfer(bytes, Promise.promise());
        write(Preamble.notice(Preamble.NOTIFY_SEND_READY, slot, bytes.byteSize()).encode());
        if (q.remoteRecvs > 0) {
            q.remoteRecvs--;
            writeData(slot, t);
        } else {
            q.sends.add(t);
        }
        release(slot, q);
        return t.done().future();
    }

    /** Posts a receive into {@code into} on {@code slot}; completes once the peer's data filled it. */
    Future<Void> recv(long slot, MemorySegment into) {
        SlotQueue q = queue(slot);
        if (q.remoteSends > 0) {
            q.remoteSends--;
        } else {
            q.expectedSendNotices++;
        }
        return announceRecv(slot, q, into);
    }

    /** Posts a receive only when the peer has announced a send on {@code slot} (gloo's {@code tryRecv}); else null. */
    Future<Void> tryRecv(long slot, MemorySegment into) {
        SlotQueue q = slots.get(slot);
        if (q == null || q.remoteSends == 0) {
            return null;
        }
        q.remoteSends--;
        return announceRecv(slot, q, into);
    }

    private Future<Void> announceRecv(long slot, SlotQueue q, MemorySegment into) {
        Transfer t = new Transfer(into, Promise.promise());
        q.recvs.add(t);
        write(Preamble.notice(Preamble.NOTIFY_RECV_READY, slot, into.byteSize()).encode());
        return t.done().future();
    }

    /** Sends an empty send notice on {@code slot}, which tells the peer which collective this rank called. */
    void announce(long slot) {
        write(Preamble.notice(Preamble.NOTIFY_SEND_READY, slot, 0).encode());
    }

    /**
     * Fails every posted operation with {@code cause} and closes the connection, lingering so that what was written
     * last (a notice that names this rank's collective, say) reaches the peer rather than a reset; completes once the
     * connection is closed.
     */
    Future<Void> fail(Throwable cause) {
        for (SlotQueue q : slots.values()) {
            q.sends.forEach(t -> t.done().tryFail(cause));
            q.recvs.forEach(t -> t.done().tryFail(cause));
        }
        if (reading != null) {
            reading.done().tryFail(cause);
            reading = null;
        }
        slots.clear();
        header.release();
        return socket == null ? Future.succeededFuture() : LingeringClose.close(socket, LINGER_MILLIS);
    }

    /** The slots with operations still outstanding, for a timeout's message. */
    String outstanding() {
        StringBuilder b = new StringBuilder();
        slots.forEach((slot, q) -> {
            if (!q.sends.isEmpty() || !q.recvs.isEmpty()) {
                b.append(b.isEmpty() ? "" : ", ").append(Slot.describe(slot)).append(": ").append(q.sends.size())
                        .append(" send(s) the peer has not asked for, ").append(q.recvs.size())
                        .append(" receive(s) it has not filled");
            }
        });
        return b.toString();
    }

    private SlotQueue queue(long slot) {
        return slots.computeIfAbsent(slot, s -> new SlotQueue());
    }

    /** Forgets {@code q} once it is idle, unless a completion it ran already replaced it with a new queue. */
    private void release(long slot, SlotQueue q) {
        if (q.idle()) {
            slots.remove(slot, q);
        }
    }

    private void feed(ByteBuf in) {
        while (in.isReadable()) {
            if (payloadLeft < 0) {
                header.writeBytes(in, Math.min(in.readableBytes(), header.writableBytes()));
                if (header.isWritable()) {
                    return;
                }
                Preamble p = Preamble.decode(header);
                header.clear();
                onPreamble(p);
            } else {
                readPayload(in);
            }
        }
    }

    private void onPreamble(Preamble p) {
        context.announced(peer, p.slot());
        SlotQueue q = queue(p.slot());
        switch ((int) p.opcode()) {
            case Preamble.NOTIFY_SEND_READY -> onSendNotice(p.slot(), q);
            case Preamble.NOTIFY_RECV_READY -> {
                Transfer t = q.sends.poll();
                if (t == null) {
                    q.remoteRecvs++;
                } else {
                    writeData(p.slot(), t);
                }
            }
            case Preamble.SEND_UNBOUND_BUFFER -> startPayload(p, q);
            default -> throw new IllegalArgumentException("it sent data for a pinned buffer (SEND_BUFFER) on "
                    + Slot.describe(p.slot()) + ", which PyTorch's gloo collectives never use");
        }
        if (payloadLeft < 0) {
            release(p.slot(), q);
        }
    }

    private void onSendNotice(long slot, SlotQueue q) {
        if (q.expectedSendNotices > 0) {
            q.expectedSendNotices--;
            return;
        }
        GlooContext.AnyRecv any = context.takeRecvFromAny(slot, peer);
        if (any != null) {
            announceRecv(slot, q, any.into()).onComplete(ar -> any.finish(ar, peer));
            return;
        }
        q.remoteSends++;
    }

    private void startPayload(Preamble p, SlotQueue q) {
        Transfer t = q.recvs.poll();
        if (t == null) {
            throw new IllegalArgumentException("it sent " + p.length() + " bytes on " + Slot.describe(p.slot())
                    + " for which no receive was announced");
        }
        reading = t;
        readingSlot = p.slot();
        filled = 0;
        payloadLeft = p.length();
        if (p.length() != t.bytes().byteSize()) {
            context.sizeMismatch(peer, p.slot(), p.length(), t.bytes().byteSize(), t.done());
            reading = null;
        }
        if (payloadLeft == 0) {
            finishPayload();
        }
    }

    private void readPayload(ByteBuf in) {
        int n = (int) Math.min(payloadLeft, in.readableBytes());
        if (in == inPlace) {
            // Netty read these bytes into the receive itself, where they belong.
            inPlace = null;
            filled += n;
            bytesInPlace += n;
        } else if (reading != null) {
            MemorySegment into = reading.bytes();
            int at = in.readerIndex();
            for (ByteBuffer part : in.nioBuffers(at, n)) {
                int len = part.remaining();
                MemorySegment.copy(MemorySegment.ofBuffer(part), 0, into, filled, len);
                filled += len;
            }
        }
        in.skipBytes(n);
        payloadLeft -= n;
        if (payloadLeft == 0) {
            finishPayload();
        }
    }

    private void finishPayload() {
        Transfer t = reading;
        reading = null;
        payloadLeft = -1;
        SlotQueue q = slots.get(readingSlot);
        if (q != null) {
            release(readingSlot, q);
        }
        if (t != null) {
            t.done().tryComplete();
        }
    }

    private void writeData(long slot, Transfer t) {
        ByteBuf head = Preamble.data(slot, t.bytes().byteSize()).encode();
        ByteBuf message = t.bytes().byteSize() == 0 ? head
                : Unpooled.wrappedBuffer(head, Unpooled.wrappedBuffer(byteBuffer(t.bytes())));
        socket.writeMessage(message).onComplete(t.done());
    }

    private void write(ByteBuf notice) {
        socket.writeMessage(notice);
    }

    /**
     * The receive's memory from where its payload has reached, for Netty to read the rest into ({@link InPlaceReads}):
     * only for a large payload into native memory, and never twice at once; else null. Called on the socket's loop,
     * which is the context's: a call from elsewhere gets null.
     */
    ByteBuf inPlaceTarget() {
        if (!context.loop().nettyEventLoop().inEventLoop()) {
            return null;
        }
        if (inPlace != null && inPlace.refCnt() == 0) {
            inPlace = null; // Netty released it unread: the socket ended.
        }
        if (inPlace != null || reading == null || payloadLeft < IN_PLACE_MIN || !reading.bytes().isNative()
                || context.broken() != null) {
            return null;
        }
        long n = Math.min(payloadLeft, Integer.MAX_VALUE);
        inPlace = Unpooled.wrappedBuffer(reading.bytes().asSlice(filled, n).asByteBuffer()).clear();
        return inPlace;
    }

    /** The payload bytes Netty read straight into receives so far, for tests. */
    long bytesInPlace() {
        return bytesInPlace;
    }

    /** Off-heap and byte[] memory is sent in place; other heap arrays (long[], ...) have no byte view. */
    private static ByteBuffer byteBuffer(MemorySegment bytes) {
        if (bytes.isNative() || bytes.heapBase().map(a -> a instanceof byte[]).orElse(false)) {
            return bytes.asByteBuffer();
        }
        return ByteBuffer.wrap(bytes.toArray(ValueLayout.JAVA_BYTE));
    }
}
