package io.tensorbus.backend.gloo;

import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.PeerLostException;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The transport context of one gloo group ({@code tcp::Context}): a {@link GlooPair} per peer, receives from any of
 * several peers, and what tells a wrong collective from a late one. gloo sends nothing that names a collective
 * but its slot, so a peer's notice on a collective slot whose counter this rank is running under another
 * collective's prefix is a mismatch, found as soon as the notice arrives. The first failure breaks the context,
 * as gloo's pairs stay broken after an error: their streams can no longer be trusted to line up. A peer whose
 * connection ended owing nothing breaks it only once an operation needs that peer again. Everything here runs on
 * {@link #loop()}.
 */
final class GlooContext {
    private final int rank;
    private final int size;
    private final String group;
    private final ContextInternal loop;
    private final GlooPair[] pairs;
    private final Map<Long, ArrayDeque<AnyRecv>> recvsFromAny = new HashMap<>();
    /** The prefix of the collective this rank runs under each counter value. */
    private final Map<Long, Integer> running = new HashMap<>();
    /** For counter values this rank has not reached: the first prefix a peer announced, and which peer. */
    private final Map<Long, int[]> ahead = new HashMap<>();
    private final Map<Long, Promise<Void>> runningDone = new HashMap<>();
    private final List<Runnable> onBreak = new ArrayList<>();
    private Throwable broken;

    GlooContext(int rank, int size, String group, ContextInternal loop) {
        this.rank = rank;
        this.size = size;
        this.group = group;
        this.loop = loop;
        this.pairs = new GlooPair[size];
        for (int p = 0; p < size; p++) {
            pairs[p] = p == rank ? null : new GlooPair(this, p);
        }
    }

    /** A receive from whichever of {@code from} announces a send first. */
    record AnyRecv(Set<Integer> from, MemorySegment into, Promise<Integer> done) {
        void finish(AsyncResult<Void> filled, int peer) {
            if (filled.succeeded()) {
                done.tryComplete(peer);
            } else {
                done.tryFail(filled.cause());
            }
        }
    }

    int rank() {
        return rank;
    }

    int size() {
        return size;
    }

    String group() {
        return group;
    }

    ContextInternal loop() {
        return loop;
    }

    GlooPair pair(int peer) {
        return pairs[peer];
    }

    /** The failure that broke this context, or null. */
    Throwable broken() {
        return broken;
    }

    /** Sends {@code bytes} to {@code peer} on {@code slot}. */
    Future<Void> send(int peer, long slot, MemorySegment bytes) {
        return failure(peer) != null ? Future.failedFuture(broken) : pairs[peer].send(slot, bytes);
    }

    /** Receives {@code into.byteSize()} bytes from {@code peer} on {@code slot}. */
    Future<Void> recv(int peer, long slot, MemorySegment into) {
        return failure(peer) != null ? Future.failedFuture(broken) : pairs[peer].recv(slot, into);
    }

    /**
     * What an operation with {@code peer} fails with: the context's failure, or the peer's ended connection, which
     * breaks the context now, as that operation can never finish; null when it may go ahead.
     */
    private Throwable failure(int peer) {
        PeerLostException ended = pairs[peer].ended();
        if (broken == null && ended != null) {
            breakWith(ended);
        }
        return broken;
    }

    /**
     * Receives from the first of {@code from} that announces a send on {@code slot} (gloo's {@code recvFromAny},
     * which asks the peers in the order given); completes with that peer.
     */
    Future<Integer> recvFromAny(int[] from, long slot, MemorySegment into) {
        Set<Integer> peers = new HashSet<>();
        for (int peer : from) {
            if (failure(peer) != null) {
                return Future.failedFuture(broken);
            }
            peers.add(peer);
        }
        AnyRecv recv = new AnyRecv(peers, into, Promise.promise());
        for (int peer : from) {
            Future<Void> posted = pairs[peer].tryRecv(slot, into);
            if (posted != null) {
                posted.onComplete(ar -> recv.finish(ar, peer));
                return recv.done().future();
            }
        }
        recvsFromAny.computeIfAbsent(slot, s -> new ArrayDeque<>()).add(recv);
        return recv.done().future();
    }

    /** Whether a receive-from-any waits on {@code peer} among others. */
    boolean waitsOnAnyOf(int peer) {
        return recvsFromAny.values().stream().anyMatch(w -> w.stream().anyMatch(r -> r.from().contains(peer)));
    }

    /** The oldest receive-from-any on {@code slot} that {@code peer} may fill, taken; null when there is none. */
    AnyRecv takeRecvFromAny(long slot, int peer) {
        ArrayDeque<AnyRecv> waiting = recvsFromAny.get(slot);
        if (waiting == null) {
            return null;
        }
        for (Iterator<AnyRecv> it = waiting.iterator(); it.hasNext(); ) {
            AnyRecv r = it.next();
            if (r.from().contains(peer)) {
                it.remove();
                if (waiting.isEmpty()) {
                    recvsFromAny.remove(slot);
                }
                return r;
            }
        }
        return null;
    }

    /**
     * Starts a collective under counter {@code tag} with {@code prefix}; fails at once when a peer already announced
     * another collective under that counter. {@code done} is failed when one does later.
     */
    Future<Void> begin(long tag, int prefix, Promise<Void> done) {
        if (broken != null) {
            return Future.failedFuture(broken);
        }
        int[] seen = ahead.remove(tag);
        if (seen != null && seen[0] != prefix) {
            // The peer learns of the mismatch only from a message on this rank's slot: one empty notice before the
            // connections close lets it name both collectives too.
            pairs[seen[1]].announce(Slot.build(prefix, tag));
            CollectiveMismatchException e = mismatch(tag, prefix, seen[0], seen[1]);
            breakWith(e);
            return Future.failedFuture(e);
        }
        running.put(tag, prefix);
        runningDone.put(tag, done);
        done.future().onComplete(ar -> {
            running.remove(tag);
            runningDone.remove(tag);
        });
        return Future.succeededFuture();
    }

    /** A peer's message arrived on {@code slot}: checks it against the collective this rank runs under its counter. */
    void announced(int peer, long slot) {
        int prefix = Slot.prefix(slot);
        if (prefix == 0) {
            return;
        }
        long tag = Slot.tag(slot);
        Integer mine = running.get(tag);
        if (mine == null) {
            ahead.putIfAbsent(tag, new int[] {prefix, peer});
        } else if (mine != prefix) {
            breakWith(mismatch(tag, mine, prefix, peer));
        }
    }

    private CollectiveMismatchException mismatch(long tag, int mine, int theirs, int peer) {
        return new CollectiveMismatchException(group, tag, "gloo group '" + group + "': rank " + peer + " called "
                + Slot.name(theirs) + " as collective #" + tag + " while rank " + rank + " (this process) called "
                + Slot.name(mine) + "; every rank must call the same collectives in the same order");
    }

    /** A message of the wrong size for the receive it fills: that receive fails, the stream stays in step. */
    void sizeMismatch(int peer, long slot, long sent, long expected, Promise<Void> recv) {
        recv.tryFail(new CommunicationException(group, Slot.prefix(slot) == 0 ? -1 : Slot.tag(slot), "gloo group '"
                + group + "': rank " + peer + " sent " + sent + " bytes on " + Slot.describe(slot) + " where rank "
                + rank + " (this process) receives " + expected + " bytes", null));
    }

    /** The connection to {@code peer} failed: every operation of the context fails, naming it. */
    void peerFailed(int peer, String why, Throwable cause) {
        if (broken == null) {
            breakWith(lost(peer, why, cause));
        }
    }

    /** The failure of losing {@code peer}, naming both ranks and {@code why}. */
    PeerLostException lost(int peer, String why, Throwable cause) {
        return new PeerLostException(group, -1, peer, "gloo group '" + group + "': lost rank " + peer + " from rank "
                + rank + ": " + why, cause);
    }

    /** Fails every outstanding and later operation with {@code cause} and closes the connections. */
    void breakWith(Throwable cause) {
        if (broken != null) {
            return;
        }
        broken = cause;
        for (Promise<Void> p : Map.copyOf(runningDone).values()) {
            p.tryFail(cause);
        }
        for (ArrayDeque<AnyRecv> waiting : recvsFromAny.values()) {
            waiting.forEach(r -> r.done().tryFail(cause));
        }
        recvsFromAny.clear();
        List<Future<Void>> closing = new ArrayList<>();
        for (GlooPair p : pairs) {
            if (p != null) {
                closing.add(p.fail(cause));
            }
        }
        // Closing a server or the client closes its connections at once: only after the pairs have lingered.
        Future.join(closing).onComplete(closed -> onBreak.forEach(Runnable::run));
    }

    /** Runs {@code action} when the context breaks or closes (closing what the set-up opened). */
    void onBreak(Runnable action) {
        if (broken != null) {
            action.run();
        } else {
            onBreak.add(action);
        }
    }

    /** What each peer still owes, for a timeout's message. */
    String outstanding() {
        StringBuilder b = new StringBuilder();
        for (GlooPair p : pairs) {
            if (p != null) {
                String o = p.outstanding();
                if (!o.isEmpty()) {
                    b.append(b.isEmpty() ? "" : "; ").append("rank ").append(p.peer()).append(": ").append(o);
                }
            }
        }
        return b.isEmpty() ? "nothing outstanding" : b.toString();
    }
}
