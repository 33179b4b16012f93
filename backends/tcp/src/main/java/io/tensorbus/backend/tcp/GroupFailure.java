package io.tensorbus.backend.tcp;

import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.spi.BackendOptions;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How a tcp group fails, as NCCL's does: the first cause (a mismatch, a timeout, a lost peer, a malformed frame)
 * breaks the group, every pending and later operation fails with it in its own words, and the peers hear why
 * through ABORT frames; a peer that left in order fails only what it can no longer finish. Runs on the group's
 * event loop; {@link #isBroken} and {@link #cause} are read from callers' threads too.
 */
final class GroupFailure {
    private final TcpBackend backend;
    private final BackendOptions options;
    private volatile CommunicationException broken;
    /** Per peer: the number of collectives it called before it left in order, or -1 while it is here. */
    private final AtomicLongArray departed;
    /** Per peer: true once it left in order and its connection closed. */
    private final boolean[] gone;

    GroupFailure(TcpBackend backend, BackendOptions options) {
        this.backend = backend;
        this.options = options;
        this.departed = new AtomicLongArray(options.worldSize());
        for (int p = 0; p < options.worldSize(); p++) {
            departed.set(p, -1);
        }
        this.gone = new boolean[options.worldSize()];
    }

    boolean isBroken() {
        return broken != null;
    }

    /**
     * Marks the group broken by {@code cause} at once, from any thread, when nothing broke it before; the event
     * loop then runs {@link #breakGroup} with it. Checks made on callers' threads ({@link #isBroken}) see it
     * without waiting for the loop.
     */
    synchronized void markBroken(CommunicationException cause) {
        if (broken == null) {
            broken = cause;
        }
    }

    /** The cause that broke the group, or null. */
    CommunicationException cause() {
        return broken;
    }

    /** True once {@code peer} left in order and its connection closed. */
    boolean isGone(int peer) {
        return gone[peer];
    }

    boolean failIfBroken(Promise<?> promise, String what) {
        return failIfBroken(promise, what, -1);
    }

    /**
     * Fails {@code promise} (of operation {@code what}, which names the group, collective {@code sequence} or -1)
     * if the group is unusable.
     */
    boolean failIfBroken(Promise<?> promise, String what, long sequence) {
        CommunicationException b = broken;
        if (b == null && !backend.isClosed()) {
            return false;
        }
        if (b == null) {
            promise.tryFail(new CommunicationException(options.groupName(), sequence, what
                    + " cannot run: the group was closed on " + backend.who(options.rank()), null));
        } else {
            promise.tryFail(b.forOperation(options.groupName(), sequence, what + " cannot run on "
                    + backend.who(options.rank()) + ": " + b.getMessage()));
        }
        return true;
    }

    void mismatch(long sequence, Call call, int peer, Frame frame) {
        mismatchFound(new CollectiveMismatchException(options.groupName(), sequence,
                mismatchMessage(sequence, call, peer, frame)));
    }

    /**
     * The message of a mismatch at collective {@code sequence}: this rank's call and what {@code peer}'s frame says.
     */
    String mismatchMessage(long sequence, Call call, int peer, Frame frame) {
        String shape = call.numel() == frame.opNumel() && call.shapeHash() != frame.shapeHash()
                ? " (the same number of elements in another shape)" : "";
        return "collective mismatch in group '" + options.groupName() + "' at collective #" + sequence + ": "
                + backend.who(options.rank()) + " called " + call.describe() + " but " + backend.who(peer)
                + " called " + Call.describe(frame) + shape
                + " (every rank must call the same collectives in the same order)";
    }

    /**
     * Breaks the group with {@code e} and tells the peers, which may be waiting for frames this rank will never send.
     */
    void mismatchFound(CollectiveMismatchException e) {
        abortPeers(e.sequence(), e.getMessage(), Frame.ABORT_MISMATCH);
        breakGroup(e);
    }

    /** Sends every peer an ABORT saying why ({@code reason}: {@link Frame#ABORT_MISMATCH} or ABORT_FAILED). */
    void abortPeers(long sequence, String message, long reason) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        MemorySegment payload = MemorySegment.ofArray(
                Arrays.copyOf(text, Math.min(text.length, Frame.MAX_ABORT_BYTES)));
        Frame abort = new Frame(Frame.ABORT, 0, 0, Frame.NO_REDUCE, -1, -1, sequence, 0, 0, backend.groupHash(),
                payload.byteSize(), reason);
        for (int p = 0; p < options.worldSize(); p++) {
            PeerConnection c = backend.connection(p);
            if (c != null) {
                c.write(abort, payload);
            }
        }
    }

    /**
     * A peer gave up on the group and said why: a mismatch it found, or its own failure (then it leaves, and
     * the error names the peer it lost rather than only the one that left).
     */
    void abortArrived(int peer, long reason, String message) {
        if (broken == null && !backend.isClosed()) {
            long seq = backend.firstActiveSequence();
            breakGroup(reason == Frame.ABORT_FAILED
                    ? lost(peer, seq, null, null, "it left after its group failed: " + message)
                    : new CollectiveMismatchException(options.groupName(), seq, backend.who(peer)
                    + " aborted group '" + options.groupName() + "': " + message));
        }
    }

    /** Fails every pending operation with {@code cause} (each collective's own message names it). */
    void breakGroup(CommunicationException cause) {
        markBroken(cause);
        for (CollectiveOp op : backend.activeOps()) {
            backend.finish(op);
            op.promise.tryFail(op.sequence == cause.sequence() ? cause
                    : cause.forOperation(options.groupName(), op.sequence, backend.describe(op) + " failed on "
                    + backend.who(options.rank()) + ": " + cause.getMessage()));
        }
        backend.router().failAll(cause);
    }

    /** The connection to {@code peer} is gone or carried garbage. */
    void peerLost(int peer, String why, Throwable cause) {
        if (backend.isClosed()) {
            return;
        }
        if (departed.get(peer) >= 0) {
            peerLeft(peer);
            return;
        }
        breakGroup(lost(peer, -1, null, cause == null ? new RuntimeException(why) : cause, why));
    }

    /** {@code peer} announced it leaves after {@code collectives} collectives, all of which it finished. */
    void peerDeparting(int peer, long collectives) {
        departed.set(peer, collectives);
    }

    /**
     * A peer left in order: operations it finished are unaffected (its data has arrived), but collectives
     * it never called and receives that wait for it alone can never finish.
     */
    private void peerLeft(int peer) {
        gone[peer] = true;
        backend.router().failFrom(peer, lost(peer, -1, inGroup("recv from " + backend.who(peer)), null,
                leftMessage(peer)));
        for (CollectiveOp op : backend.activeOps()) {
            failIfDeparted(op);
        }
        // A collective of the shared area fails on its own thread once the group is broken.
        for (CollectiveOp op : backend.sharedOps()) {
            failIfDeparted(op);
        }
    }

    String leftMessage(int peer) {
        return "it left the group after its " + departed.get(peer) + " collectives";
    }

    /** Fails the group when a peer left before calling collective {@code op}; true if it did. */
    boolean failIfDeparted(CollectiveOp op) {
        PeerLostException e = departedBefore(op);
        if (e != null) {
            breakGroup(e);
        }
        return e != null;
    }

    /** The failure of {@code op} when a peer left before calling it, else null. Any thread. */
    PeerLostException departedBefore(CollectiveOp op) {
        for (int p = 0; p < departed.length(); p++) {
            long left = departed.get(p);
            if (left >= 0 && left < op.sequence) {
                return lost(p, op.sequence, backend.describe(op), null, leftMessage(p));
            }
        }
        return null;
    }

    /** A frame of collective {@code op} could not be written to {@code peer}: the peer is lost to it. */
    CommunicationException writeFailed(int peer, CollectiveOp op, Throwable cause) {
        CommunicationException b = broken;
        return b != null ? b : lost(peer, op.sequence, backend.describe(op), cause, "writing to it failed: "
                + cause.getMessage());
    }

    PeerLostException lost(int peer, long sequence, String what, Throwable cause) {
        return lost(peer, sequence, what, cause, String.valueOf(cause.getMessage()));
    }

    /** {@code peer} is lost to operation {@code what} (which names the group), or to the group when null. */
    PeerLostException lost(int peer, long sequence, String what, Throwable cause, String why) {
        String lost = what == null ? "lost " + backend.who(peer) + " of group '" + options.groupName() + "'"
                : what + ": lost " + backend.who(peer);
        return new PeerLostException(options.groupName(), sequence, peer, lost + " on " + backend.who(options.rank())
                + ": " + why, cause);
    }

    /** "{@code what} in group 'NAME'". */
    String inGroup(String what) {
        return what + " in group '" + options.groupName() + "'";
    }
}
