package io.tensorbus.distributed.rpc;

import io.vertx.core.Promise;
import java.util.HashSet;
import java.util.Set;

/**
 * What an {@link RRef} refers to, kept apart from the {@code RRef} object so that the {@code Cleaner} can
 * release it after the object was collected: the value's id and owner, and, on a user, its fork, whether
 * the owner has confirmed it, the forks it passed on that the owner has not yet confirmed, and the calls
 * that use it still in flight. A user's DELETE waits for all three, so the owner never drops a value that
 * a message in flight still needs. Mutable fields are guarded by {@code this}.
 */
final class RRefHandle implements Runnable {
    /** A fork of {@code parent} made to pass it on in a message. */
    record Child(RRefHandle parent, ForkId fork) {
    }

    private final RRefContext context;
    private final RRefId id;
    private final WorkerInfo owner;
    private final ForkId fork;
    private final Promise<Void> confirmed = Promise.promise();
    private final Set<ForkId> pendingChildren = new HashSet<>();
    private int inFlight;
    private boolean closed;
    private boolean deleteSent;

    /** A handle on the owner ({@code fork} null) or a user's handle with its fork. */
    RRefHandle(RRefContext context, RRefId id, WorkerInfo owner, ForkId fork) {
        this.context = context;
        this.id = id;
        this.owner = owner;
        this.fork = fork;
        if (fork == null) {
            confirmed.complete();
        }
    }

    RRefContext context() {
        return context;
    }

    RRefId id() {
        return id;
    }

    WorkerInfo owner() {
        return owner;
    }

    /** The user's fork; null for a handle on the owner. */
    ForkId fork() {
        return fork;
    }

    boolean isOwner() {
        return fork == null;
    }

    Promise<Void> confirmed() {
        return confirmed;
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /** The Cleaner's action, and {@link RRef#close()}'s: releases the reference once. */
    @Override
    public void run() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        context.released(this);
    }

    /** Counts a call that needs the value; false when the handle is closed. */
    synchronized boolean begin() {
        if (closed) {
            return false;
        }
        inFlight++;
        return true;
    }

    synchronized void end() {
        inFlight--;
    }

    /** Records a fork passed on, not yet confirmed by the owner; false when the handle is closed. */
    synchronized boolean addChild(ForkId child) {
        return !closed && pendingChildren.add(child);
    }

    synchronized void childDone(ForkId child) {
        // Idempotent: an abort after a late CHILD_ACCEPT, or the reverse, finds the child gone.
        pendingChildren.remove(child);
    }

    /**
     * True once, when a closed user's DELETE may go: the owner has answered its creation or acceptance,
     * and no call or child fork still needs the value.
     */
    synchronized boolean takeDelete() {
        if (fork == null || !closed || deleteSent || !confirmed.future().isComplete() || inFlight > 0
                || !pendingChildren.isEmpty()) {
            return false;
        }
        deleteSent = true;
        return true;
    }

    @Override
    public String toString() {
        return (fork == null ? "owner handle of " : fork + " of ") + id + " owned by " + owner;
    }
}
