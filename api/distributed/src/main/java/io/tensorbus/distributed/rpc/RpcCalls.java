package io.tensorbus.distributed.rpc;

import io.netty.buffer.ByteBuf;
import io.opentelemetry.api.trace.Span;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.internal.distributed.autograd.DistAutogradContext;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

/**
 * The call path of an agent (PyTorch's {@code RpcAgent::send}): encodes a call, frames it and sends it on the
 * connection to its callee (opened at the first call), or runs a call to this worker itself without a
 * connection; matches answers to the calls waiting for them, fails them at their timeout, when their callee is
 * lost or when the agent closes. Thread-safe: calls come from any thread, answers on the connections' event
 * loops.
 */
final class RpcCalls implements RpcCaller {
    /** The timer of calls this worker made (and the counter of their argument bytes). */
    static final String CALLS_METER = Meters.PREFIX + "rpc.calls";
    private final LocalWorker worker;
    private final NetClient client;
    private final RRefContext rrefs;
    /** Runs a call addressed to this worker in a context (what a connection's callee side does with a CALL). */
    private final BiFunction<List<Object>, DistAutogradContext, Future<Object>> invokeHere;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, RpcCall> pending = new ConcurrentHashMap<>();
    private final Map<Integer, Future<RpcOutgoing>> outgoing = new ConcurrentHashMap<>();
    private final Map<Integer, String> lost = new ConcurrentHashMap<>();
    /** The meters of the calls of each function. */
    private final Map<String, Meters.Operation> meters = new ConcurrentHashMap<>();
    /** The spans of calls, or null when the agent traces none. */
    private final RpcTracing tracing;
    /** The workers known gone (a connection to them closed while up, or they left the cluster), with why. */
    private final Map<Integer, String> gone = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param client the agent's client, kept by the agent (Vert.x closes a client nothing references)
     * @param invokeHere runs a call to this worker, in a distributed autograd context or none, and completes with
     *     its result
     */
    RpcCalls(LocalWorker worker, NetClient client, RRefContext rrefs,
             BiFunction<List<Object>, DistAutogradContext, Future<Object>> invokeHere) {
        this.worker = worker;
        this.client = client;
        this.rrefs = rrefs;
        this.invokeHere = invokeHere;
        this.tracing = RpcTracing.of(worker.options());
    }

    /**
     * Calls {@code function} on {@code to} with {@code args}; never blocks. The arguments are checked by the
     * agent; {@code to} is a worker of the job.
     *
     * @throws IllegalArgumentException for an argument the codec cannot encode
     */
    @Override
    @SuppressWarnings("unchecked")
    public <T> Future<T> rpcAsync(WorkerInfo to, Duration timeout, String function, Object... args) {
        WorkerInfo target = worker.table().check(to);
        RpcChecks.function(function);
        RpcChecks.timeout(timeout);
        String gone = lost.get(target.id());
        if (gone != null) {
            return Future.failedFuture(new RpcException("worker " + target + " " + gone));
        }
        List<Object> values = new ArrayList<>();
        values.add(function);
        if (args != null) {
            values.addAll(Arrays.asList(args));
        }
        DistAutogradContext context = recorded(function) ? worker.autograd().current() : null;
        Span span = tracing != null && RpcTracing.traces(function) ? tracing.startClient(function, worker.self(),
                target) : null;
        RpcPayload.Encoded body;
        try {
            body = RpcPayload.encode(rrefs, values,
                    RpcPayload.recorder(worker.autograd(), context, target, "arguments", function),
                    span == null ? null : tracing.inject(span));
        } catch (RuntimeException e) {
            IllegalArgumentException refused = new IllegalArgumentException("cannot send the arguments of '"
                    + function + "' to " + target + ": " + e.getMessage(), e);
            if (span != null) {
                RpcTracing.end(span, refused);
            }
            throw refused;
        }
        long id = ids.incrementAndGet();
        RpcCall call = new RpcCall(id, target, function, body.forks());
        pending.put(id, call);
        measure(call, body);
        if (span != null) {
            call.promise().future().onComplete(r -> RpcTracing.end(span, r.cause()));
        }
        try {
            long timer = worker.vertx().setTimer(timeout.toMillis(),
                    t -> fail(id, new RpcTimeoutException("'" + function
                    + "' on " + target + " did not complete within " + timeout)));
            call.promise().future().onComplete(r -> worker.vertx().cancelTimer(timer));
            if (target.id() == worker.self().id()) {
                callSelf(id, function, body);
                rrefs.commit(body.forks());
            } else {
                Future<RpcOutgoing> connection = connection(target);
                if (connection.succeeded()) {
                    // Written (or copied) now: the caller may change the tensors once this returns.
                    sent(body, connection.result().call(id, function, body));
                } else {
                    // Framed now, for the same reason.
                    ByteBuf frame = RpcFrame.frame(RpcFrame.CALL, id, body.body(), body.segments());
                    connection.onSuccess(c -> sent(body, c.call(id, function, frame))).onFailure(e -> {
                        frame.release();
                        sent(body, false);
                        fail(id, e);
                    });
                }
            }
        } catch (RuntimeException e) {
            rrefs.abort(body.forks());
            // Shut down meanwhile (a closed client or timer refuses): the call fails, it does not linger.
            fail(id, closed ? new RpcException("the RPC agent of " + worker.self() + " is shut down", e) : e);
        }
        return (Future<T>) call.promise().future();
    }

    /**
     * Times {@code call} and counts the bytes of its {@code body} when metrics are on, and puts it on this rank's
     * timeline when it has one.
     */
    private void measure(RpcCall call, RpcPayload.Encoded body) {
        long begin = Meters.start();
        long at = TimelineRecorder.now(worker.self().id());
        if (begin == 0 && at == 0) {
            return;
        }
        long bytes = body.body().length + body.segments().stream().mapToLong(MemorySegment::byteSize).sum();
        if (begin != 0) {
            Meters.Operation m = meters.computeIfAbsent(call.function(), f -> Meters.operation(CALLS_METER, true,
                    "worker", worker.self().name(), "function", f));
            call.promise().future().onComplete(r -> m.record(begin, bytes, r.cause()));
        }
        if (at != 0) {
            TimelineRecorder.spanWhenDone(worker.self().id(), at, "rpc", call.function(), "rpc to "
                    + call.target().name(), call.id(), new JsonObject().put("to", call.target().name())
                    .put("bytes", bytes), call.promise().future());
        }
    }

    /**
     * True for the calls a distributed autograd context records (PyTorch forces recording for them, so that their
     * results are recorded too): every user function, and the RRef messages that carry values (creating one,
     * fetching one, calling a method of one); not the RRef control messages nor distributed autograd's own.
     */
    private static boolean recorded(String function) {
        return !function.startsWith(RRefOwnerTable.PREFIX)
                || function.equals(RRefOwnerTable.CREATE) || function.equals(RRefOwnerTable.FETCH)
                || function.equals(RRefOwnerTable.INVOKE);
    }

    /** The RRef forks of a message stay pending once it is sent (until accepted), and are dropped if it never was. */
    private void sent(RpcPayload.Encoded message, boolean sent) {
        if (sent) {
            rrefs.commit(message.forks());
        } else {
            rrefs.abort(message.forks());
        }
    }

    /** A call to this worker itself: no connection, but arguments and result are copied as on the wire. */
    private void callSelf(long id, String function, RpcPayload.Encoded body) {
        RpcPayload.Decoded args = RpcPayload.copy(rrefs, body);
        List<Object> values = args.values();
        DistAutogradContext context = worker.autograd().recordRecv(worker.self().id(), args.meta(), args.tensors());
        invokeHere.apply(values, context).onComplete(r -> {
            try {
                selfAnswered(id, function, context, r);
            } finally {
                RpcServe.releaseArguments(values);
            }
        });
    }

    /** Completes call {@code id} to this worker itself with the outcome {@code r}, copied as on the wire. */
    private void selfAnswered(long id, String function, DistAutogradContext context, AsyncResult<Object> r) {
        if (r.failed()) {
            fail(id, RpcServe.asRemote(worker.self().name(), function, r.cause()));
            return;
        }
        RpcPayload.Encoded result;
        Object copy;
        try {
            result = RpcPayload.encode(rrefs, Collections.singletonList(r.result()),
                    RpcPayload.recorder(worker.autograd(), context, worker.self(), "result", function));
        } catch (RuntimeException e) {
            fail(id, RpcServe.asRemote(worker.self().name(), function, e));
            return;
        }
        try {
            RpcPayload.Decoded d = RpcPayload.copy(rrefs, result);
            copy = d.values().get(0);
            worker.autograd().recordRecv(worker.self().id(), d.meta(), d.tensors());
        } catch (RuntimeException e) {
            sent(result, false);
            fail(id, RpcServe.asRemote(worker.self().name(), function, e));
            return;
        }
        sent(result, true);
        complete(id, copy);
    }

    /** The number of calls of this worker waiting for an answer. */
    int pendingCount() {
        return pending.size();
    }

    void complete(long id, Object value) {
        RpcCall call = pending.remove(id);
        if (call != null) {
            call.promise().tryComplete(value);
        }
    }

    void fail(long id, Throwable cause) {
        RpcCall call = pending.remove(id);
        if (call != null) {
            if (!(cause instanceof RemoteException)) {
                rrefs.unanswered(call.forks());
            }
            call.promise().tryFail(cause);
        }
    }

    /** The pending call {@code id}, for error messages (null when none), for error messages (null when none). */
    RpcCall call(long id) {
        return pending.get(id);
    }

    /**
     * {@code worker} is known gone: a connection to it that was up closed, or it left the cluster. A graceful
     * shutdown then fails at once instead of waiting for it (see {@link RpcShutdown}); the first reason stays.
     */
    void gone(WorkerInfo worker, String why) {
        if (!closed) {
            gone.putIfAbsent(worker.id(), "worker " + worker + " " + why);
        }
    }

    /** The workers known gone, with why ({@link #gone(WorkerInfo, String)}); a snapshot. */
    Map<Integer, String> gone() {
        return Map.copyOf(gone);
    }

    /** True when {@code worker} is gone for good ({@link #lost}). */
    boolean isLost(WorkerInfo worker) {
        return lost.containsKey(worker.id());
    }

    /**
     * {@code worker} is gone for good (its node left the cluster): its pending calls fail naming
     * {@code why}, and so do later ones.
     */
    void lost(WorkerInfo worker, String why) {
        lost.put(worker.id(), why);
        gone(worker, why);
        this.worker.autograd().workerLost(worker.id());
        Future<RpcOutgoing> c = outgoing.get(worker.id());
        if (c != null) {
            c.onSuccess(o -> o.lost(why));
        }
        for (RpcCall call : List.copyOf(pending.values())) {
            if (call.target().id() == worker.id()) {
                fail(call.id(), new RpcException("worker " + worker + " " + why + " while '" + call.function()
                        + "' was pending"));
            }
        }
    }

    /** Drops {@code connection} to {@code worker} (it broke) unless a newer one has replaced it. */
    void forget(WorkerInfo worker, RpcOutgoing connection) {
        outgoing.computeIfPresent(worker.id(), (id, f) -> f.succeeded() && f.result() == connection ? null : f);
    }

    /** How many connections to callees run through shared memory. */
    long sharedMemoryConnections() {
        return outgoing.values().stream().filter(f -> f.succeeded() && f.result().isSharedMemory()).count();
    }

    private Future<RpcOutgoing> connection(WorkerInfo target) {
        Future<RpcOutgoing> f = outgoing.computeIfAbsent(target.id(),
                id -> RpcOutgoing.connect(worker, this, rrefs, client, target));
        f.onFailure(e -> outgoing.remove(target.id(), f));
        return f;
    }

    /** Fails every pending call, naming {@code why}, and closes the connections and the client. */
    void closeAll(String why) {
        closed = true;
        for (RpcCall call : List.copyOf(pending.values())) {
            fail(call.id(), new RpcException(why + " while '" + call.function() + "' on " + call.target()
                    + " was pending"));
        }
        outgoing.values().forEach(f -> f.onSuccess(RpcOutgoing::close));
        // Closed connections are no longer this worker's: its counters say so at once, not when sockets end.
        outgoing.clear();
        client.close();
    }

    /** A call waiting for its answer. */
    record RpcCall(long id, WorkerInfo target, String function, Promise<Object> promise,
            List<RRefHandle.Child> forks) {
        RpcCall(long id, WorkerInfo target, String function, List<RRefHandle.Child> forks) {
            this(id, target, function, Promise.promise(), forks);
        }
    }
}
