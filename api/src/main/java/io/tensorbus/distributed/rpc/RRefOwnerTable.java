package io.tensorbus.distributed.rpc;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * The values this worker owns, and the owner's half of PyTorch's RRef protocol. Control messages travel
 * as calls of internal functions; each is idempotent and may arrive in any order: a fork deleted once
 * stays deleted, a FORK or ACCEPT of a value already gone is acknowledged and ignored, a repeated
 * creation runs nothing.
 */
final class RRefOwnerTable {
    /** Prefix of the internal functions; users cannot register names that start with it. */
    static final String PREFIX = "tensorbus.";
    /** {@code [RRefId, ForkId, function, args...]}: run the function and own its result. */
    static final String CREATE = "tensorbus.rref.create";
    /** {@code [RRefId, ForkId]} from the user that passed a reference on. */
    static final String FORK = "tensorbus.rref.fork";
    /** {@code [RRefId, ForkId]} from the user that received it. */
    static final String ACCEPT = "tensorbus.rref.accept";
    /** {@code [RRefId, ForkId]}: that user is done with it. */
    static final String DELETE = "tensorbus.rref.delete";
    /** {@code [RRefId]}: the value ({@code to_here}). */
    static final String FETCH = "tensorbus.rref.fetch";
    /** {@code [RRefId, interface, method, parameter types, args...]}: call a method of the value. */
    static final String INVOKE = "tensorbus.rref.invoke";

    private final RpcAgent agent;
    private final Map<RRefId, OwnerRRef> owned = new HashMap<>();
    private long applied;
    private long repeated;
    /** Tests: answer nothing to a control message this accepts (applied, but its acknowledgement is lost). */
    volatile BiPredicate<String, List<Object>> loseAck = (f, a) -> false;

    RRefOwnerTable(RpcAgent agent) {
        this.agent = agent;
    }

    /** The internal function {@code function}'s answer to {@code args}, or null when it is not one. */
    Future<Object> serve(String function, List<Object> args) {
        if (!function.startsWith(PREFIX)) {
            return null;
        }
        try {
            Future<Object> answer = switch (function) {
                case CREATE -> create(args);
                case FORK, ACCEPT -> control(args, true);
                case DELETE -> control(args, false);
                case FETCH -> fetch(id(args, 0));
                case INVOKE -> invoke(args);
                default -> Future.failedFuture(new IllegalArgumentException("no internal function '" + function
                        + "'"));
            };
            return loseAck.test(function, args) ? Future.future(p -> { }) : answer;
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
            throw new IllegalStateException("no RRef " + id + " is owned by " + agent.self());
        }
        return e;
    }

    /** A reference to a value of this worker came back in a message: a new handle instead of the fork. */
    synchronized OwnerRRef arrived(RRefId id, ForkId fork) {
        OwnerRRef e = owned.get(id);
        if (e == null) {
            throw new IllegalArgumentException("a message refers to " + id + ", which " + agent.self()
                    + " does not own");
        }
        e.openHandle();
        e.deleteFork(fork);
        return e;
    }

    /** A handle on this worker was closed or collected. */
    synchronized void closeHandle(RRefId id) {
        OwnerRRef e = owned.get(id);
        if (e != null) {
            e.closeHandle();
            dropIfUnused(e);
        }
    }

    /** Local FORK: a handle here passed the value on to another worker. */
    synchronized void forked(RRefId id, ForkId child) {
        get(id).addFork(child);
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
            lines.add(e.id() + " owned by " + agent.self().name() + " was never released: " + e.users());
        }
        return lines;
    }

    private Future<Object> create(List<Object> args) {
        RRefId id = id(args, 0);
        ForkId fork = fork(args, 1);
        OwnerRRef e;
        synchronized (this) {
            e = owned.computeIfAbsent(id, OwnerRRef::new);
            if (!e.create()) {
                repeated++;
                return Future.succeededFuture();
            }
            applied++;
            e.addFork(fork);
        }
        // The user's function runs as any call does; its outcome is what to_here answers.
        RpcServe.invoke(agent, args.subList(2, args.size())).onComplete(e.value());
        return Future.succeededFuture();
    }

    private synchronized Future<Object> control(List<Object> args, boolean add) {
        RRefId id = id(args, 0);
        ForkId fork = fork(args, 1);
        OwnerRRef e = owned.get(id);
        boolean changed = e != null && (add ? e.addFork(fork) : e.deleteFork(fork));
        if (changed) {
            applied++;
            dropIfUnused(e);
        } else {
            repeated++;
        }
        return Future.succeededFuture();
    }

    private Future<Object> fetch(RRefId id) {
        synchronized (this) {
            // A fetch may overtake the creation it follows: it waits for it.
            return owned.computeIfAbsent(id, OwnerRRef::new).value().future();
        }
    }

    private Future<Object> invoke(List<Object> args) {
        RRefId id = id(args, 0);
        String type = (String) args.get(1);
        String method = (String) args.get(2);
        @SuppressWarnings("unchecked")
        List<String> parameters = (List<String>) args.get(3);
        List<Object> values = args.subList(4, args.size());
        OwnerRRef e;
        synchronized (this) {
            e = owned.get(id);
        }
        if (e == null) {
            return Future.failedFuture(new IllegalArgumentException(id + " is not owned by " + agent.self()));
        }
        return e.value().future().compose(v -> RpcServe.onPool(agent,
                () -> RRefProxies.invoke(v, type, method, parameters, values)));
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
}
