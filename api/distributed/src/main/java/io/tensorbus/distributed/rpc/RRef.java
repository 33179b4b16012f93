package io.tensorbus.distributed.rpc;

import io.tensorbus.internal.distributed.Blocking;
import io.vertx.core.Future;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.function.Function;

/**
 * A remote reference (PyTorch's {@code RRef}): a reference to a value that lives on one worker, its
 * owner, and may be passed to any worker in RPC arguments and results. The owner keeps the value while
 * any reference to it is open on any worker; references count themselves through PyTorch's fork / accept
 * / delete protocol, whose control messages are retried until acknowledged and may overtake the creation
 * of the value.
 *
 * <p>Made by {@link RpcAgent#remote} (the callee owns the result) or {@link #of} (this worker owns the
 * value). {@link #toHere()} copies the value here; the typed proxies call a method of the value on its
 * owner: {@code rref.rpcSync(Model.class).forward(x)}, {@code rref.rpcAsync(Model.class, m -> m.forward(x))},
 * {@code rref.remote(Model.class, m -> m.forward(x))}. Close a reference when done; one that is collected
 * without being closed is released too, later. A reference a function receives as an argument is released when
 * the call returns, as in PyTorch, unless the function {@link #keep()}s it. A graceful {@link RpcAgent#shutdown}
 * reports the values and references never released ({@link RpcAgent#rrefLeaks()}). Thread-safe.
 *
 * @param <T> the type of the value
 */
public final class RRef<T> implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create(Thread.ofPlatform().daemon().name("tensorbus-rref-cleaner")
            .factory());

    private final RRefHandle handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean kept;

    RRef(RRefHandle handle) {
        this.handle = handle;
        this.cleanable = CLEANER.register(this, handle);
    }

    /**
     * {@code RRef(value)}: a reference to {@code value}, owned by the worker of {@link RpcAgent#current()},
     * to pass to other workers.
     *
     * @throws IllegalStateException when no RPC agent runs in this process
     */
    public static <T> RRef<T> of(T value) {
        return of(RpcAgent.current(), value);
    }

    /**
     * A reference to {@code value}, owned by {@code agent}'s worker.
     *
     * @throws NullPointerException when {@code agent} is null
     * @throws IllegalStateException after {@code agent} shut down
     */
    public static <T> RRef<T> of(RpcAgent agent, T value) {
        if (agent == null) {
            throw new NullPointerException("agent");
        }
        if (agent.isClosed()) {
            throw new IllegalStateException("the RPC agent of " + agent.self() + " is shut down");
        }
        return agent.rrefs().of(value);
    }

    /** The value's global id. */
    public RRefId id() {
        return handle.id();
    }

    /** This reference's fork: null on the owner, which needs none. */
    public ForkId forkId() {
        return handle.fork();
    }

    /** The worker that holds the value. */
    public WorkerInfo owner() {
        return handle.owner();
    }

    /** True on the owner. */
    public boolean isOwner() {
        return handle.isOwner();
    }

    /**
     * True once the owner has acknowledged this reference (its creation by {@code remote}, or its arrival
     * here); always true on the owner.
     */
    public boolean confirmedByOwner() {
        return handle.confirmed().future().succeeded();
    }

    /**
     * The value itself, on the owner; waits (up to the agent's timeout) while {@code remote} still computes
     * it.
     *
     * @throws IllegalStateException on a worker that is not the owner, on a closed reference, or when
     *     waiting on an event-loop thread
     * @throws RuntimeException what the function that made the value threw
     */
    public T localValue() {
        if (!isOwner()) {
            throw new IllegalStateException("localValue() is only for the owner " + owner() + " of " + id()
                    + "; use toHere() to fetch a copy");
        }
        return toHere();
    }

    /** {@link #toHereAsync(Duration)} within the agent's default timeout. */
    public Future<T> toHereAsync() {
        return toHereAsync(handle.context().timeout());
    }

    /**
     * {@code to_here}: the value, copied from its owner (on the owner, the value itself); never blocks.
     *
     * @return fails with the exception of the function that made the value ({@link RemoteException}), or
     *     as a call does
     * @throws IllegalStateException when this reference is closed
     * @throws IllegalArgumentException for a timeout outside 1 ms to 365 days
     */
    public Future<T> toHereAsync(Duration timeout) {
        Future<T> f = handle.context().toHere(handle, RpcChecks.timeout(timeout));
        return f.andThen(r -> Reference.reachabilityFence(this));
    }

    /** {@link #toHere(Duration)} within the agent's default timeout. */
    public T toHere() {
        return toHere(handle.context().timeout());
    }

    /**
     * The blocking {@link #toHereAsync(Duration)}.
     *
     * @throws IllegalStateException on an event-loop thread, which must never block
     */
    public T toHere(Duration timeout) {
        return Blocking.await(toHereAsync(timeout), timeout.plusSeconds(5), "toHere of " + id());
    }

    /** {@link #rpcSync(Class, Duration)} within the agent's default timeout. */
    public <I> I rpcSync(Class<I> type) {
        return rpcSync(type, handle.context().timeout());
    }

    /**
     * A proxy of {@code type} whose methods run on the owner, on the value, and wait for the result:
     * {@code rref.rpcSync(Model.class).forward(x)}. Arguments and results travel as in any call.
     *
     * @param type an interface the value implements (checked on the owner, at each call)
     * @throws IllegalArgumentException when {@code type} is not an interface
     */
    public <I> I rpcSync(Class<I> type, Duration timeout) {
        RpcChecks.timeout(timeout);
        return RRefProxies.sync(type, (m, args) -> Blocking.await(handle.context().invoke(handle, m, args, timeout),
                timeout.plusSeconds(5), type.getSimpleName() + "." + m.getName() + " on " + owner()), this);
    }

    /** {@link #rpcAsync(Class, Duration, Function)} within the agent's default timeout. */
    public <I, R> Future<R> rpcAsync(Class<I> type, Function<? super I, R> call) {
        return rpcAsync(type, handle.context().timeout(), call);
    }

    /**
     * Calls one method of the value on its owner without waiting: {@code call} receives a recorder of
     * {@code type} and calls the method, {@code rref.rpcAsync(Model.class, m -> m.forward(x))}.
     *
     * @throws IllegalArgumentException when {@code type} is not an interface or {@code call} does not call
     *     exactly one of its methods
     */
    public <I, R> Future<R> rpcAsync(Class<I> type, Duration timeout, Function<? super I, R> call) {
        RpcChecks.timeout(timeout);
        RRefProxies.Recorded r = RRefProxies.record(type, call);
        Future<R> f = handle.context().invoke(handle, r.method(), r.args(), timeout);
        return f.andThen(x -> Reference.reachabilityFence(this));
    }

    /** {@link #remote(Class, Duration, Function)} within the agent's default timeout. */
    public <I, R> RRef<R> remote(Class<I> type, Function<? super I, R> call) {
        return remote(type, handle.context().timeout(), call);
    }

    /**
     * Calls one method of the value on its owner, which keeps the result: a reference to it,
     * {@code rref.remote(Model.class, m -> m.forward(x))}.
     *
     * @throws IllegalArgumentException as {@link #rpcAsync(Class, Duration, Function)}
     */
    public <I, R> RRef<R> remote(Class<I> type, Duration timeout, Function<? super I, R> call) {
        RpcChecks.timeout(timeout);
        RRefProxies.Recorded r = RRefProxies.record(type, call);
        try {
            return handle.context().remoteInvoke(handle, r.method(), r.args(), timeout);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Keeps a reference that a function received as an argument past the end of the call. Such references are
     * released when the call that received them returns, as PyTorch's are when the function's frame goes: a
     * function that stores one (in an object it builds or a field) calls {@code keep()} and later
     * {@link #close()}s it. On any other reference it changes nothing.
     *
     * @return this reference
     */
    public RRef<T> keep() {
        kept = true;
        return this;
    }

    /** True once {@link #keep()} was called. */
    boolean isKept() {
        return kept;
    }

    /**
     * Releases this reference (again does nothing): the owner drops the value when no reference is left.
     * Calls already made with it still complete.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    RRefHandle handle() {
        return handle;
    }

    @Override
    public String toString() {
        return "RRef(" + handle + (handle.isClosed() ? ", closed" : "") + ")";
    }
}
