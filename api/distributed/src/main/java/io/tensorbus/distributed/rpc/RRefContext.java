package io.tensorbus.distributed.rpc;

import io.tensorbus.io.ObjectCodec;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One agent's side of PyTorch's RRef protocol (its {@code RRefContext}): makes references ({@code remote},
 * {@code RRef.of}), forks a reference when it is sent and accepts one when it arrives, keeps a reference
 * alive while the forks it passed on are not yet accepted by the owner and while calls that need it are in
 * flight, and sends the DELETE of a user reference that was closed or collected. The values this worker
 * owns are in its {@link RRefOwnerTable}.
 *
 * <p>Passing a reference from A to C: A records the child fork (A's own DELETE waits); C sends ACCEPT to the
 * owner and, once acknowledged, CHILD_ACCEPT to A, which lets A go. Only C speaks about its fork, ACCEPT
 * before DELETE, so the owner never sees them out of order; a reference arriving at its owner becomes a
 * handle there, and an owner's own handle keeps the fork it passed on until it arrives.
 */
final class RRefContext {
    /** How often placeholders that wait for a creation are checked for expiry, in milliseconds. */
    private static final long EXPIRY_CHECK_MS = 100;

    private final LocalWorker worker;
    private final RRefTransport transport;
    private final RRefOwnerTable owned;
    private final RRefControl control;
    private final AtomicLong ids = new AtomicLong();
    private final Set<RRefHandle> users = ConcurrentHashMap.newKeySet();
    private final Map<ForkId, RRefHandle> children = new ConcurrentHashMap<>();

    RRefContext(LocalWorker worker, RRefTransport transport, RpcServing serving) {
        this.worker = worker;
        this.transport = transport;
        this.owned = new RRefOwnerTable(worker, this, serving);
        this.control = new RRefControl(worker, transport);
        long timer = worker.vertx().setPeriodic(EXPIRY_CHECK_MS, t -> owned.expire());
        transport.onClose(() -> worker.vertx().cancelTimer(timer));
    }

    /** The agent's codec, which encodes RRefs through this context while a message is encoded. */
    ObjectCodec codec() {
        return worker.options().codec();
    }

    /** The agent's default timeout. */
    Duration timeout() {
        return worker.options().timeout();
    }

    RRefOwnerTable owned() {
        return owned;
    }

    RRefControl control() {
        return control;
    }

    /** {@code RRef(value)}: a value this worker owns, with one handle. */
    <T> RRef<T> of(T value) {
        RRefId id = newId();
        owned.own(id).value().complete(value);
        return new RRef<>(new RRefHandle(this, id, worker.self(), null));
    }

    /**
     * {@code rpc.remote}: runs {@code function(args)} on {@code to}, which owns the result. The reference is
     * usable at once; it is confirmed when the owner acknowledges the creation, which {@code timeout} bounds.
     */
    <T> RRef<T> remote(WorkerInfo to, Duration timeout, String function, Object[] args) {
        RpcChecks.function(function);
        RRefId id = newId();
        if (to.id() == worker.self().id()) {
            // Arguments are copied as on the wire; the function may take as long as it takes, as on another worker.
            Future<Object> value = transport.rpcAsync(to, Duration.ofDays(365), function, args);
            value.onComplete(owned.own(id).value());
            return new RRef<>(new RRefHandle(this, id, to, null));
        }
        ForkId fork = new ForkId(worker.self().id(), ids.incrementAndGet());
        List<Object> message = new ArrayList<>(List.of(id, fork, function));
        if (args != null) {
            message.addAll(Arrays.asList(args));
        }
        Future<Object> created = transport.rpcAsync(to, timeout, RRefOwnerTable.CREATE, message.toArray());
        RRefHandle h = user(id, to, fork);
        created.onComplete(r -> confirm(h, r.failed() ? r.cause() : null));
        return new RRef<>(h);
    }

    /** {@code to_here}: the value, from the owner (a copy) or, on the owner, itself. */
    @SuppressWarnings("unchecked")
    <T> Future<T> toHere(RRefHandle h, Duration timeout) {
        if (h.isOwner()) {
            if (h.isClosed()) {
                throw new IllegalStateException("the " + h + " is closed");
            }
            return (Future<T>) within(owned.get(h.id()).value().future(), timeout, "toHere of " + h.id());
        }
        Future<Void> c = h.confirmed().future();
        if (c.failed()) {
            return Future.failedFuture(new RpcException("the creation of " + h.id() + " on " + h.owner()
                    + " was not acknowledged: " + c.cause().getMessage(), c.cause()));
        }
        return using(h, () -> transport.rpcAsync(h.owner(), timeout, RRefOwnerTable.FETCH, h.id(), timeout.toMillis()));
    }

    /** Calls {@code method} of the value on its owner. */
    <T> Future<T> invoke(RRefHandle h, Method method, Object[] args, Duration timeout) {
        Object[] message = RRefProxies.message(h.id(), timeout, method, args);
        return using(h, () -> transport.rpcAsync(h.owner(), timeout, RRefOwnerTable.INVOKE, message));
    }

    /** Calls {@code method} of the value on its owner, which keeps the result: a new reference. */
    <T> RRef<T> remoteInvoke(RRefHandle h, Method method, Object[] args, Duration timeout) {
        Object[] message = RRefProxies.message(h.id(), timeout, method, args);
        if (!h.begin()) {
            throw new IllegalStateException("the " + h + " is closed");
        }
        try {
            RRef<T> result = remote(h.owner(), timeout, RRefOwnerTable.INVOKE, message);
            result.handle().confirmed().future().onComplete(r -> done(h));
            return result;
        } catch (RuntimeException e) {
            done(h);
            throw e;
        }
    }

    /** The handle was closed or collected: an owner's handle goes now, a user's DELETE once nothing needs it. */
    void released(RRefHandle h) {
        if (h.isOwner()) {
            owned.closeHandle(h.id());
        } else {
            maybeDelete(h);
        }
    }

    /**
     * Passing {@code h} on in a message: a new fork, recorded on {@code forks} (dropped again by
     * {@link #abort} if the message never leaves); the portable form the codec writes:
     * {@code [owner rank, RRefId, ForkId, sender rank]}.
     */
    List<Object> fork(RRefHandle h, List<RRefHandle.Child> forks) {
        if (h.context() != this) {
            throw new IllegalArgumentException("an RRef of another RPC agent cannot be sent by " + worker.self());
        }
        ForkId child = new ForkId(worker.self().id(), ids.incrementAndGet());
        if (h.isOwner()) {
            if (h.isClosed()) {
                throw new IllegalStateException("the " + h + " is closed and cannot be sent");
            }
            owned.passOn(h.id(), child);
        } else if (h.addChild(child)) {
            children.put(child, h);
        } else {
            throw new IllegalStateException("the " + h + " is closed and cannot be sent");
        }
        forks.add(new RRefHandle.Child(h, child));
        return List.of(h.owner().id(), h.id(), child, worker.self().id());
    }

    /** The message that carries {@code forks} is on its way: nothing more to do until the receiver accepts. */
    void commit(List<RRefHandle.Child> forks) {
        // The receiver sends ACCEPT to the owner, then CHILD_ACCEPT here; see childAccepted.
    }

    /** The message that would have carried {@code forks} never left: they are dropped. */
    void abort(List<RRefHandle.Child> forks) {
        for (RRefHandle.Child c : forks) {
            if (c.parent().isOwner()) {
                owned.dropPassedOn(c.parent().id(), c.fork());
            } else {
                childAccepted(c.parent().id(), c.fork());
            }
        }
    }

    /** CHILD_ACCEPT: the owner has accepted the fork this worker passed on; the parent may go. */
    Future<Object> childAccepted(RRefId id, ForkId child) {
        RRefHandle h = children.get(child);
        if (h != null && !h.id().equals(id)) {
            throw new IllegalArgumentException(child + " is a fork of " + h.id() + ", not of " + id);
        }
        if (h != null && children.remove(child, h)) {
            h.childDone(child);
            maybeDelete(h);
        }
        return Future.succeededFuture();
    }

    /**
     * The call that carried {@code forks} failed without an answer from its receiver (lost, refused, timed
     * out): if the receiver did decode it, its ACCEPT comes soon; forks still pending after twice the agent's
     * timeout are taken as never received, so their senders can go.
     */
    void unanswered(List<RRefHandle.Child> forks) {
        if (forks.isEmpty()) {
            return;
        }
        try {
            worker.vertx().setTimer(timeout().multipliedBy(2).toMillis(), t -> abort(forks));
        } catch (RuntimeException e) {
            // Closed meanwhile: nothing is released any more.
        }
    }

    /**
     * A reference arrived in a message from {@code senderRank}: on the owner a new handle, elsewhere a user
     * that accepts its fork.
     */
    RRef<Object> arrived(int ownerRank, RRefId id, ForkId fork, int senderRank) {
        WorkerInfo owner = worker.table().byRank(ownerRank);
        WorkerInfo sender = worker.table().byRank(senderRank);
        if (owner.id() == worker.self().id()) {
            owned.arrived(id, fork);
            tellSender(sender, owner, id, fork);
            return new RRef<>(new RRefHandle(this, id, owner, null));
        }
        RRefHandle h = user(id, owner, fork);
        control.send(owner, RRefOwnerTable.ACCEPT, List.of(id, fork), () -> {
            confirm(h, null);
            tellSender(sender, owner, id, fork);
        });
        return new RRef<>(h);
    }

    /**
     * True while control messages wait for their acknowledgement or a released reference has not yet had
     * its DELETE acknowledged (waiting for its confirmation or its children): a graceful shutdown waits.
     */
    boolean busy() {
        return control.pending() > 0 || users.stream().anyMatch(RRefHandle::isClosed);
    }

    int users() {
        return users.size();
    }

    /** One line per value still owned here and per user reference here not released. */
    List<String> leaks() {
        List<String> lines = new ArrayList<>(owned.leaks());
        for (RRefHandle h : users) {
            lines.add(worker.self().name() + (h.isClosed() ? " released, but its DELETE was not acknowledged"
                    + " (or not sent: children or confirmation pending), " : " never released ") + h);
        }
        return lines;
    }

    /** The sender of a reference learns that its fork was accepted (an owner that sent it needs no word). */
    private void tellSender(WorkerInfo sender, WorkerInfo owner, RRefId id, ForkId fork) {
        if (sender.id() == owner.id()) {
            return;
        }
        if (sender.id() == worker.self().id()) {
            childAccepted(id, fork);
        } else {
            control.send(sender, RRefOwnerTable.CHILD_ACCEPT, List.of(id, fork), () -> { });
        }
    }

    private RRefId newId() {
        return new RRefId(worker.self().id(), ids.incrementAndGet());
    }

    private RRefHandle user(RRefId id, WorkerInfo owner, ForkId fork) {
        RRefHandle h = new RRefHandle(this, id, owner, fork);
        users.add(h);
        return h;
    }

    private void confirm(RRefHandle h, Throwable failure) {
        if (failure == null) {
            h.confirmed().tryComplete();
        } else {
            h.confirmed().tryFail(failure);
        }
        maybeDelete(h);
    }

    private <T> Future<T> using(RRefHandle h, Supplier<Future<T>> call) {
        if (!h.begin()) {
            throw new IllegalStateException("the " + h + " is closed");
        }
        try {
            return call.get().andThen(r -> done(h));
        } catch (RuntimeException e) {
            done(h);
            throw e;
        }
    }

    /** {@code f}, failing with {@link RpcTimeoutException} when it has not completed within {@code timeout}. */
    private <T> Future<T> within(Future<T> f, Duration timeout, String what) {
        if (f.isComplete()) {
            return f;
        }
        Promise<T> p = Promise.promise();
        long timer = worker.vertx().setTimer(timeout.toMillis(), t -> p.tryFail(new RpcTimeoutException(what
                + " did not complete within " + timeout)));
        f.onComplete(r -> {
            worker.vertx().cancelTimer(timer);
            if (r.succeeded()) {
                p.tryComplete(r.result());
            } else {
                p.tryFail(r.cause());
            }
        });
        return p.future();
    }

    private void done(RRefHandle h) {
        h.end();
        maybeDelete(h);
    }

    private void maybeDelete(RRefHandle h) {
        if (h.takeDelete()) {
            control.send(h.owner(), RRefOwnerTable.DELETE, List.of(h.id(), h.fork()), () -> users.remove(h));
        }
    }
}
