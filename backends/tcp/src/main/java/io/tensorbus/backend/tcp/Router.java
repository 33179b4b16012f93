package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Matches incoming messages with the receives that wait for them, on the group's event loop only.
 * Collective messages are matched by (sender, sequence, tag); point-to-point ones by (sender or any, tag)
 * in arrival order, as MPI does. A message that arrives before its receive is posted is either parked
 * (a large payload: its connection stops reading for a moment so that the bytes can go straight into the
 * receive's buffer once it is posted) or buffered (small payloads, and parked ones that waited too long).
 */
final class Router {
    /** Payloads at least this large are parked rather than copied when they arrive early. */
    static final long PARK_BYTES = 64 * 1024;

    record Key(int peer, long sequence, long tag) {
    }

    /** A receive that waits for its message. */
    static final class Pending {
        final int src;
        final long tag;
        final Sink sink;
        final DType dtype;
        final Promise<Integer> promise = Promise.promise();

        Pending(int src, long tag, Sink sink, DType dtype) {
            this.src = src;
            this.tag = tag;
            this.sink = sink;
            this.dtype = dtype;
        }

        void complete(int peer) {
            promise.tryComplete(peer);
        }
    }

    /** A message that arrived before its receive: parked on its connection or buffered. */
    static final class Early {
        final int peer;
        final Frame frame;
        PeerConnection parkedOn;
        MemorySegment data;
        boolean complete;
        Pending waiter;

        Early(int peer, Frame frame) {
            this.peer = peer;
            this.frame = frame;
        }
    }

    /** Where payloads too large for a heap array are buffered. */
    private final StagingPool pool;
    private final Map<Key, Pending> posted = new HashMap<>();
    private final Map<Key, Early> early = new HashMap<>();
    private final List<Pending> postedP2p = new ArrayList<>();
    private final ArrayDeque<Early> earlyP2p = new ArrayDeque<>();
    private Early lastParked;
    /**
     * Point-to-point receives posted plus messages that came before theirs, as last counted on the event loop:
     * while it is 0 a caller's thread may take the next message itself without overtaking either.
     */
    private volatile int p2pBacklog;

    /** The message {@link #arrived} just parked. */
    /** @param pool where payloads of {@link #PARK_BYTES} or more wait when they cannot stay parked */
    Router(StagingPool pool) {
        this.pool = pool;
    }

    Early lastEarly() {
        return lastParked;
    }

    /** Waits for the collective message {@code key} and streams it into {@code sink}; completes with its sender. */
    Future<Integer> expect(Key key, Sink sink) {
        Pending p = new Pending(key.peer(), key.tag(), sink, null);
        Early e = early.remove(key);
        if (e == null) {
            posted.put(key, p);
        } else {
            deliver(e, p);
        }
        return p.promise.future();
    }

    /** Waits for a point-to-point message from {@code src} (or any) with {@code tag}. */
    Pending expectP2p(int src, long tag, Sink sink, DType dtype) {
        Pending p = new Pending(src, tag, sink, dtype);
        for (Iterator<Early> it = earlyP2p.iterator(); it.hasNext(); ) {
            Early e = it.next();
            if ((src < 0 || e.peer == src) && e.frame.tag() == tag) {
                it.remove();
                recount();
                deliver(e, p);
                return p;
            }
        }
        postedP2p.add(p);
        recount();
        return p;
    }

    /** True when no point-to-point receive waits and no message waits for one. Any thread. */
    boolean p2pQuiet() {
        return p2pBacklog == 0;
    }

    private void recount() {
        p2pBacklog = postedP2p.size() + earlyP2p.size();
    }

    /** True while any receive waits for its message. */
    boolean waiting() {
        return !posted.isEmpty() || !postedP2p.isEmpty();
    }

    /** True while {@code p} waits for a message that has not arrived (none matched it yet). */
    boolean unmatched(Pending p) {
        return postedP2p.contains(p) || posted.containsValue(p);
    }

    /** Forgets a receive that timed out (no-op when its message already matched it). */
    void withdraw(Pending p) {
        postedP2p.remove(p);
        recount();
        posted.values().remove(p);
        p.sink.cancel();
    }

    /**
     * A data frame's header arrived from {@code peer}: returns the sink for its payload, or null when the
     * connection should park the payload until {@link #expect} (or the park timeout) takes it.
     */
    Sink arrived(PeerConnection conn, Frame f) {
        Pending p = f.isPointToPoint() ? takeP2p(conn.peer(), f.tag())
                : posted.remove(new Key(conn.peer(), f.sequence(), f.tag()));
        if (p != null) {
            return sinkFor(p, conn.peer(), f);
        }
        Early e = new Early(conn.peer(), f);
        if (f.isPointToPoint()) {
            earlyP2p.add(e);
            recount();
        } else {
            early.put(new Key(conn.peer(), f.sequence(), f.tag()), e);
        }
        if (f.payloadBytes() >= PARK_BYTES) {
            e.parkedOn = conn;
            lastParked = e;
            return null;
        }
        return buffer(e);
    }

    /** The park of {@code e} lasted too long: copy its payload into a buffer so the connection moves on. */
    Sink unpark(Early e) {
        e.parkedOn = null;
        return buffer(e);
    }

    /** The early messages of collective {@code sequence}, to check their fingerprints when it starts. */
    List<Early> earlyFor(long sequence) {
        List<Early> found = new ArrayList<>();
        for (Early e : early.values()) {
            if (e.frame.sequence() == sequence) {
                found.add(e);
            }
        }
        return found;
    }

    /** Fails the point-to-point receives that wait for {@code peer} alone (it left the group). */
    void failFrom(int peer, Throwable cause) {
        for (Iterator<Pending> it = postedP2p.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (p.src == peer) {
                it.remove();
                p.sink.cancel();
                p.promise.tryFail(cause);
            }
        }
        recount();
    }

    /** Fails and cancels every waiting receive (the group broke or closed). */
    void failAll(Throwable cause) {
        List<Pending> all = new ArrayList<>(posted.values());
        all.addAll(postedP2p);
        posted.clear();
        postedP2p.clear();
        recount();
        for (Pending p : all) {
            p.sink.cancel();
            p.promise.tryFail(cause);
        }
    }

    private Pending takeP2p(int peer, long tag) {
        for (Iterator<Pending> it = postedP2p.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if ((p.src < 0 || p.src == peer) && p.tag == tag) {
                it.remove();
                recount();
                return p;
            }
        }
        return null;
    }

    private Sink sinkFor(Pending p, int peer, Frame f) {
        if (p.dtype != null && p.dtype.ordinal() != f.dtype()) {
            p.promise.tryFail(new IllegalArgumentException("a " + DType.values()[f.dtype()] + " message from rank "
                    + peer + " (tag " + f.tag() + ") cannot be received into a " + p.dtype + " buffer"));
            return Sink.discard(f.payloadBytes());
        }
        if (p.sink.expectedBytes != f.payloadBytes()) {
            p.promise.tryFail(new IllegalArgumentException("a message of " + f.payloadBytes() + " bytes from rank "
                    + peer + " (tag " + f.tag() + ") does not fit the receive buffer of " + p.sink.expectedBytes
                    + " bytes"));
            return Sink.discard(f.payloadBytes());
        }
        p.sink.whenFull = () -> p.complete(peer);
        return p.sink;
    }

    private Sink buffer(Early e) {
        long n = e.frame.payloadBytes();
        e.data = n <= PARK_BYTES ? MemorySegment.ofArray(new byte[(int) n]) : pool.take(n);
        Sink s = Sink.copyInto(e.data);
        s.whenFull = () -> {
            e.complete = true;
            if (e.waiter != null) {
                replay(e, e.waiter);
            }
        };
        return s;
    }

    private void deliver(Early e, Pending p) {
        if (e.parkedOn != null) {
            PeerConnection conn = e.parkedOn;
            e.parkedOn = null;
            conn.resume(sinkFor(p, e.peer, e.frame));
        } else if (e.complete) {
            replay(e, p);
        } else {
            e.waiter = p;
        }
    }

    private void replay(Early e, Pending p) {
        Sink s = sinkFor(p, e.peer, e.frame);
        if (s == p.sink) {
            s.accept(e.data);
            p.complete(e.peer);
        }
        if (e.data.isNative()) {
            // Sinks copy or reduce as they accept: nothing reads the buffer any more.
            pool.give(e.data);
        }
        e.data = null;
    }
}
