package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One agent's side of PyTorch's RRef protocol (its {@code RRefContext}): makes references ({@code remote},
 * {@code RRef.of}), keeps the user references alive until the owner has confirmed them and every message
 * that needs them is done, forks a reference when it is sent and accepts one when it arrives, and sends
 * the DELETE of a user reference that was closed or collected. The values this worker owns are in its
 * {@link RRefOwnerTable}.
 */
final class RRefContext {
    private final RpcAgent agent;
    private final RRefOwnerTable owned;
    private final RRefControl control;
    private final AtomicLong ids = new AtomicLong();
    private final Set<RRefHandle> users = ConcurrentHashMap.newKeySet();

    RRefContext(RpcAgent agent) {
        this.agent = agent;
        this.owned = new RRefOwnerTable(agent);
        this.control = new RRefControl(agent);
    }

    /** The agent's default timeout. */
    Duration timeout() {
        return agent.options().timeout();
    }

    RRefOwnerTable owned() {
        return owned;
    }

    RRefControl control() {
        return control;
    }

    /** {@code RRef(value)}: a value this worker owns, with one handle. */
    <T> RRef<T> of(T value) {
        RRefId id = new RRefId(agent.self().id(), ids.incrementAndGet());
        owned.own(id).value().complete(value);
        return new RRef<>(new RRefHandle(this, id, agent.self(), null));
    }

    /**
     * {@code rpc.remote}: runs {@code function(args)} on {@code to}, which owns the result. The reference is
     * usable at once; it is confirmed when the owner acknowledges the creation.
     */
    <T> RRef<T> remote(WorkerInfo to, Duration timeout, String function, Object[] args) {
        RpcChecks.function(function);
        RRefId id = new RRefId(agent.self().id(), ids.incrementAndGet());
        if (to.id() == agent.self().id()) {
            Future<Object> value = agent.rpcAsync(to, timeout, function, args);
            value.onComplete(owned.own(id).value());
            return new RRef<>(new RRefHandle(this, id, to, null));
        }
        ForkId fork = new ForkId(agent.self().id(), ids.incrementAndGet());
        List<Object> message = new ArrayList<>(List.of(id, fork, function));
        if (args != null) {
            message.addAll(Arrays.asList(args));
        }
        Future<Object> created = agent.rpcAsync(to, timeout, RRefOwnerTable.CREATE, message.toArray());
        RRefHandle h = user(id, to, fork);
        created.onComplete(r -> confirm(h, r.failed() ? r.cause() : null));
        return new RRef<>(h);
    }

    /** {@code to_here}: the value, from the owner (a copy) or, on the owner, itself. */
    @SuppressWarnings("unchecked")
    <T> Future<T> toHere(RRefHandle h, Duration timeout) {
        if (h.isOwner()) {
            return (Future<T>) owned.get(h.id()).value().future();
        }
        Future<Void> c = h.confirmed().future();
        if (c.failed()) {
            return Future.failedFuture(new RpcException("the value of " + h.id() + " was never created on "
                    + h.owner() + ": " + c.cause().getMessage(), c.cause()));
        }
        return using(h, () -> agent.rpcAsync(h.owner(), timeout, RRefOwnerTable.FETCH, h.id()));
    }

    /** Calls {@code method} of the value on its owner. */
    <T> Future<T> invoke(RRefHandle h, Method method, Object[] args, Duration timeout) {
        Object[] message = RRefProxies.message(h.id(), method, args);
        return using(h, () -> agent.rpcAsync(h.owner(), timeout, RRefOwnerTable.INVOKE, message));
    }

    /** Calls {@code method} of the value on its owner, which keeps the result: a new reference. */
    <T> RRef<T> remoteInvoke(RRefHandle h, Method method, Object[] args, Duration timeout) {
        Object[] message = RRefProxies.message(h.id(), method, args);
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
     * Passing {@code h} on to another worker: a new fork, recorded on {@code forks} (announced to the owner
     * once the whole message has been encoded); the portable form the codec writes.
     */
    List<Object> fork(RRefHandle h, List<RRefHandle.Child> forks) {
        if (h.context() != this) {
            throw new IllegalArgumentException("an RRef of another RPC agent cannot be sent by " + agent.self());
        }
        ForkId child = new ForkId(agent.self().id(), ids.incrementAndGet());
        if (h.isOwner() ? h.isClosed() : !h.addChild(child)) {
            throw new IllegalStateException("the " + h + " is closed and cannot be sent");
        }
        forks.add(new RRefHandle.Child(h, child));
        return List.of(h.owner().id(), h.id(), child);
    }

    /** The message that carries {@code forks} was encoded: the owner learns of each. */
    void commit(List<RRefHandle.Child> forks) {
        for (RRefHandle.Child c : forks) {
            RRefHandle h = c.parent();
            if (h.isOwner()) {
                owned.forked(h.id(), c.fork());
            } else {
                control.send(h.owner(), RRefOwnerTable.FORK, List.of(h.id(), c.fork()), () -> {
                    h.childDone(c.fork());
                    maybeDelete(h);
                });
            }
        }
    }

    /** The message that would have carried {@code forks} could not be encoded. */
    void abort(List<RRefHandle.Child> forks) {
        for (RRefHandle.Child c : forks) {
            if (!c.parent().isOwner()) {
                c.parent().childDone(c.fork());
                maybeDelete(c.parent());
            }
        }
    }

    /** A reference arrived in a message: on the owner a new handle, elsewhere a user that accepts its fork. */
    RRef<Object> arrived(int ownerRank, RRefId id, ForkId fork) {
        WorkerInfo owner = agent.table().byRank(ownerRank);
        if (owner.id() == agent.self().id()) {
            owned.arrived(id, fork);
            return new RRef<>(new RRefHandle(this, id, owner, null));
        }
        RRefHandle h = user(id, owner, fork);
        control.send(owner, RRefOwnerTable.ACCEPT, List.of(id, fork), () -> confirm(h, null));
        return new RRef<>(h);
    }

    /** True while control messages wait for their acknowledgement (a graceful shutdown waits for them). */
    boolean busy() {
        return control.pending() > 0;
    }

    int users() {
        return users.size();
    }

    /** One line per value still owned here and per user reference here not released. */
    List<String> leaks() {
        List<String> lines = new ArrayList<>(owned.leaks());
        for (RRefHandle h : users) {
            lines.add(agent.self().name() + (h.isClosed() ? " released but the owner never acknowledged the DELETE"
                    + " of " : " never released ") + h);
        }
        return lines;
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
