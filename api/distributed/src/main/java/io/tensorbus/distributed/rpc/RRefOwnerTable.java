package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * The values this worker owns, and the owner's half of PyTorch's RRef protocol. Control messages travel
 * as calls of internal functions; each is idempotent and may overtake the creation of the value it names
 * (a record is then made to wait for it, and expires if the creation never comes). A repeated creation
 * runs nothing.
 */
final class RRefOwnerTable {
    /** Prefix of the internal functions; users cannot register names that start with it. */
    static final String PREFIX = "tensorbus.";
    /** {@code [RRefId, ForkId, function, args...]}: run the function and own its result. */
    static final String CREATE = "tensorbus.rref.create";
    /** {@code [RRefId, ForkId]} from the user that received the reference as that fork. */
    static final String ACCEPT = "tensorbus.rref.accept";
    /** {@code [RRefId, ForkId]}: that user is done with it. */
    static final String DELETE = "tensorbus.rref.delete";
    /** {@code [RRefId, ForkId]} to the worker that passed the reference on: its child has been accepted. */
    static final String CHILD_ACCEPT = "tensorbus.rref.childAccept";
    /** {@code [RRefId, timeout ms]}: the value ({@code to_here}). */
    static final String FETCH = "tensorbus.rref.fetch";
    /** {@code [RRefId, timeout ms, interface, method, parameter types, args...]}: call a method of the value. */
    static final String INVOKE = "tensorbus.rref.invoke";

    private final LocalWorker worker;
    private final RRefContext rrefs;
    private final RpcServing serving;
    private final Map<RRefId, OwnerRRef> owned = new HashMap<>();
    private int placeholders;
    private long applied;
    private long repeated;
    /** Tests: answer nothing to a control message this accepts (applied, but its acknowledgement is lost). */
    volatile BiPredicate<String, List<Object>> loseAck = (f, a) -> false;

    RRefOwnerTable(LocalWorker worker, RRefContext rrefs, RpcServing serving) {
        this.worker = worker;
        this.rrefs = rrefs;
        this.serving = serving;
    }

    /**
     * The internal function {@code function}'s answer to {@code args} sent by {@code caller}, or null when it
     * is not one.
     */
    Future<Object> serve(WorkerInfo caller, String function, List<Object> args) {
        if (!function.startsWith(PREFIX)) {
            return null;
        }
        try {
            Future<Object> answer = switch (function) {
                case CREATE -> create(caller, args);
                case ACCEPT -> control(args, true);
                case DELETE -> control(args, false);
                case CHILD_ACCEPT -> rrefs.childAccepted(id(args, 0), fork(args, 1));
                case FETCH -> value(id(args, 0), millis(args, 1));
                case INVOKE -> invoke(args);
                default -> Future.failedFuture(new IllegalArgumentException("no internal function '" + function
                        + "'"));
            };
            return loseAck.test(function, args) ? Promise.promise().future() : answer;
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** A value made here ({@code RRef.of}, or {@code remote} to this worker), with one handle open. */
    synchronized OwnerRRef own(RRefId id) {
        OwnerRRef e = owned.computeIfAbsent(id, OwnerRRef::new);
        e.create();
        e.openHandle();
        return e;
    }

    /** The value of {@code id}, which a handle on this worker keeps alive. */
    synchronized OwnerRRef get(RRefId id) {
        OwnerRRef e = owned.get(id);
        if (e == null) {
            throw new IllegalStateException("no RRef " + id + " is owned by " + worker.self());
        }
        return e;
    }

    /** A handle here passes the value on as {@code fork}: kept until the fork arrives or is dropped. */
    synchronized void passOn(RRefId id, ForkId fork) {
        get(id).passOn(fork);
    }

    /** The message that would have carried {@code fork} never left. */
    synchronized void dropPassedOn(RRefId id, ForkId fork) {
        OwnerRRef e = owned.get(id);
        if (e != null) {
            e.dropPassedOn(fork);
            dropIfUnused(e);
        }
    }

    /** A reference to a value of this worker came back in a message as {@code fork}: a new handle. */
    synchronized void arrived(RRefId id, ForkId fork) {
        OwnerRRef e = entry(id, worker.options().timeout().multipliedBy(2));
        e.openHandle();
        e.dropPassedOn(fork);
    }

    /** A handle on this worker was closed or collected. */
    synchronized void closeHandle(RRefId id) {
        OwnerRRef e = owned.get(id);
        if (e != null) {
            e.closeHandle();
            dropIfUnused(e);
        }
    }

    /** Drops the placeholders whose creation did not come in time; their waiters fail. */
    void expire() {
        List<OwnerRRef> gone = new ArrayList<>();
        synchronized (this) {
            if (placeholders == 0) {
                return;
            }
            long now = System.nanoTime();
            for (OwnerRRef e : List.copyOf(owned.values())) {
                if (e.expired(now)) {
                    owned.remove(e.id());
                    placeholders--;
                    gone.add(e);
                }
            }
        }
        gone.forEach(e -> e.value().tryFail(new RpcException(e.id() + " was never created on " + worker.self())));
    }

    synchronized int size() {
        return owned.size();
    }

    /** Control messages applied, and those that arrived again or too late and changed nothing. */
    synchronized long[] counts() {
        return new long[] {applied, repeated};
    }

    /** One line per value still owned. */
    synchronized List<String> leaks() {
        List<String> lines = new ArrayList<>();
        for (OwnerRRef e : owned.values()) {
            lines.add(e.id() + " owned by " + worker.self().name() + " was never released: " + e.users());
        }
        return lines;
    }

    private Future<Object> create(WorkerInfo caller, List<Object> args) {
        RRefId id = id(args, 0);
        ForkId fork = fork(args, 1);
        if (caller != null && (id.createdOn() != caller.id() || fork.createdOn() != caller.id())) {
            throw new IllegalArgumentException(caller + " may only create values with its own ids, got " + id
                    + " and " + fork);
        }
        OwnerRRef e;
        synchronized (this) {
            e = entry(id, Duration.ZERO);
            if (!e.create()) {
                repeated++;
                return Future.succeededFuture();
            }
            placeholders--;
            applied++;
            e.accept(fork);
        }
        // The user's function runs as any call does; its outcome is what to_here answers.
        List<Object> call = args.subList(2, args.size());
        serving.invoke(caller, call).onComplete(r -> {
            RpcPayload.releaseArguments(call);
            if (r.succeeded()) {
                e.value().tryComplete(r.result());
            } else {
                e.value().tryFail(r.cause());
            }
        });
        return Future.succeededFuture();
    }

    private synchronized Future<Object> control(List<Object> args, boolean accept) {
        OwnerRRef e = entry(id(args, 0), worker.options().timeout().multipliedBy(2));
        ForkId fork = fork(args, 1);
        if (accept ? e.accept(fork) : e.delete(fork)) {
            applied++;
            dropIfUnused(e);
        } else {
            repeated++;
        }
        return Future.succeededFuture();
    }

    /**
     * The value of {@code id}, waiting up to {@code wait} (at most twice the agent's timeout, so that no
     * peer can keep placeholders for long) for a creation that has not arrived yet.
     */
    private Future<Object> value(RRefId id, Duration wait) {
        Duration cap = worker.options().timeout().multipliedBy(2);
        synchronized (this) {
            return entry(id, wait.compareTo(cap) < 0 ? wait : cap).value().future();
        }
    }

    private Future<Object> invoke(List<Object> args) {
        String type = (String) args.get(2);
        String method = (String) args.get(3);
        @SuppressWarnings("unchecked")
        List<String> parameters = (List<String>) args.get(4);
        List<Object> values = args.subList(5, args.size());
        return value(id(args, 0), millis(args, 1)).compose(v -> serving.onPool(
                () -> RRefProxies.invoke(v, type, method, parameters, values)));
    }

    /** The record of {@code id}; a placeholder made now waits at least {@code wait} for its creation. */
    private OwnerRRef entry(RRefId id, Duration wait) {
        OwnerRRef e = owned.get(id);
        if (e == null) {
            e = new OwnerRRef(id);
            owned.put(id, e);
            placeholders++;
        }
        if (!e.isCreated()) {
            e.keepUntil(System.nanoTime() + wait.toNanos());
        }
        return e;
    }

    private void dropIfUnused(OwnerRRef e) {
        if (e.unused()) {
            owned.remove(e.id());
        }
    }

    private static RRefId id(List<Object> args, int i) {
        if (args.size() <= i || !(args.get(i) instanceof RRefId id)) {
            throw new IllegalArgumentException("argument " + i + " of an RRef message is not an RRefId");
        }
        return id;
    }

    private static ForkId fork(List<Object> args, int i) {
        if (args.size() <= i || !(args.get(i) instanceof ForkId fork)) {
            throw new IllegalArgumentException("argument " + i + " of an RRef message is not a ForkId");
        }
        return fork;
    }

    private static Duration millis(List<Object> args, int i) {
        if (args.size() <= i || !(args.get(i) instanceof Long ms) || ms < 1) {
            throw new IllegalArgumentException("argument " + i + " of an RRef message is not a timeout in ms");
        }
        return Duration.ofMillis(ms);
    }
}
