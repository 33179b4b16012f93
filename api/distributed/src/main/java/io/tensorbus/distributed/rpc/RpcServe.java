package io.tensorbus.distributed.rpc;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.autograd.DistAutogradContext;
import io.tensorbus.internal.distributed.autograd.DistAutogradRuntime;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

/**
 * Runs calls addressed to this worker (PyTorch's {@code RequestCallback}): look up the function, run it on a
 * virtual thread of the worker's pool (at most {@code numWorkerThreads} at once), or where the call was read for a
 * function registered to run on the event loop, and answer on the connection.
 */
final class RpcServe implements RpcServing {
    /** Answers from this size up are not written from an event-loop thread, in bytes. */
    private static final long OFF_LOOP_ANSWER_BYTES = 1 << 20;
    /** Longest stack trace sent back, in characters. */
    private static final int MAX_STACK = 8192;
    /** Longest exception message sent back, in characters. */
    private static final int MAX_MESSAGE = 2048;
    /** The timer of calls this worker ran for others (and for itself). */
    static final String SERVED_METER = Meters.PREFIX + "rpc.served";
    private static final System.Logger LOG = System.getLogger(RpcServe.class.getName());

    private final LocalWorker worker;
    private final RRefContext rrefs;
    private final ExecutorService executor;
    private final Semaphore permits;
    /** What {@link RpcAgent#current()} returns while a function of this worker runs. */
    private final RpcAgent agent;
    /** The meters of the served calls of each function. */
    private final Map<String, Meters.Operation> meters = new ConcurrentHashMap<>();
    /** The spans of served calls, or null when the agent traces none. */
    private final RpcTracing tracing;

    RpcServe(LocalWorker worker, RRefContext rrefs, ExecutorService executor, Semaphore permits, RpcAgent agent) {
        this.worker = worker;
        this.rrefs = rrefs;
        this.executor = executor;
        this.permits = permits;
        this.agent = agent;
        this.tracing = RpcTracing.of(worker.options());
    }

    /**
     * Runs the call of {@code values} ({@code [function, args...]}, read from {@code call}) and answers it on
     * {@code connection}. A call of a distributed autograd context is recorded first (a recv function for its
     * tensors), runs in that context, and its result is recorded too; one whose context ids are refused is
     * answered with the refusal.
     */
    void serve(RpcIncoming connection, long id, RpcPayload.Decoded call, List<Object> values) {
        DistAutogradContext context;
        try {
            context = worker.autograd().recordRecv(connection.caller().id(), call.meta(), call.tensors());
        } catch (RuntimeException e) {
            RpcPayload.releaseArguments(values);
            raise(connection, id, e);
            return;
        }
        Object function = values.isEmpty() ? null : values.get(0);
        Span span = tracing != null && function instanceof String f && RpcTracing.traces(f)
                ? tracing.startServer(f, call.trace(), connection.caller(), worker.self()) : null;
        Future<Object> result;
        if (span == null) {
            result = invoke(connection.caller(), values, context);
        } else {
            try (Scope ignored = span.makeCurrent()) {
                result = invoke(connection.caller(), values, context);
            }
            result.onComplete(r -> RpcTracing.end(span, r.cause()));
        }
        result.onComplete(r -> {
            try {
                reply(connection, id, context, r, function);
            } finally {
                releaseArguments(values);
            }
        });
    }

    /** Answers call {@code id} of {@code context} (may be null) with the outcome {@code r}. */
    private void reply(RpcIncoming connection, long id, DistAutogradContext context, AsyncResult<Object> r,
                       Object function) {
        if (context != null && context.isReleased()) {
            LOG.log(System.Logger.Level.INFO, "dropping the result of call {0} from {1}: its distributed "
                    + "autograd context {2} was released while it ran", id, connection.caller(), context);
            raise(connection, id, new IllegalStateException("the distributed autograd context " + context
                    + " was released while the call ran: its result is dropped"));
            return;
        }
        if (r.failed()) {
            raise(connection, id, r.cause());
            return;
        }
        RpcPayload.Encoded value;
        try {
            value = RpcPayload.encode(rrefs, Collections.singletonList(r.result()),
                    RpcPayload.recorder(worker.autograd(), context, connection.caller(), "result", function));
        } catch (RuntimeException e) {
            raise(connection, id, e);
            return;
        }
        if (value.bytes() >= OFF_LOOP_ANSWER_BYTES && Context.isOnEventLoopThread()) {
            // A function that returned at once has its result here, on the event loop: a large answer is
            // written from a pool thread instead, which may wait for room in a shared-memory ring while the
            // caller reads, where the event loop would copy it aside.
            try {
                executor.execute(() -> answerOrRaise(connection, id, value));
                return;
            } catch (RejectedExecutionException e) {
                // Shutting down: answer from here.
            }
        }
        answerOrRaise(connection, id, value);
    }

    /**
     * Releases the references among a served call's arguments; the answer is encoded by now, so one it returns
     * was forked already. A {@code remote} creation answers before its function ran: the owner table releases
     * its arguments once the value is made.
     */
    static void releaseArguments(List<Object> values) {
        if (values.isEmpty() || !RRefOwnerTable.CREATE.equals(values.get(0))) {
            RpcPayload.releaseArguments(values);
        }
    }

    private void answerOrRaise(RpcIncoming connection, long id, RpcPayload.Encoded value) {
        try {
            answer(connection, id, value);
        } catch (RuntimeException e) {
            raise(connection, id, e);
        }
    }

    /** Sends the RETURN of call {@code id}; the RRef forks in it are dropped again if it cannot be sent. */
    private void answer(RpcIncoming connection, long id, RpcPayload.Encoded value) {
        try {
            if (value.bytes() > connection.callerMaxMessage()) {
                throw new RpcException("the result is " + value.bytes() + " bytes, more than the "
                        + connection.callerMaxMessage() + " the caller accepts (its maxMessageBytes)");
            }
            if (!connection.send(RpcFrame.RETURN, id, value)) {
                rrefs.abort(value.forks());
                return;
            }
        } catch (RuntimeException e) {
            rrefs.abort(value.forks());
            throw e;
        }
        rrefs.commit(value.forks());
    }

    /** Answers call {@code id} with {@code t}, without its stack when that would not fit the caller. */
    private void raise(RpcIncoming connection, long id, Throwable t) {
        byte[] body = raise(t);
        if (body.length > connection.callerMaxMessage()) {
            String m = message(t);
            body = worker.options().codec().encode(Arrays.asList(t.getClass().getName(),
                    m == null || m.length() <= 200 ? m : m.substring(0, 200) + "...", "(too long to send)"));
        }
        connection.send(RpcFrame.RAISE, id, new RpcPayload.Encoded(body, List.of()));
    }

    /**
     * Runs the function of {@code values} ({@code [function, args...]}) that {@code caller} called, with
     * {@code context} (may be null) current wherever it runs; the future holds its result.
     */
    Future<Object> invoke(WorkerInfo caller, List<Object> values, DistAutogradContext context) {
        long begin = Meters.start();
        Future<Object> result;
        try {
            // The context is current while the call is dispatched, so the pool tasks it starts inherit it.
            result = worker.autograd().callIn(context, () -> invoke(caller, values));
        } catch (Exception e) {
            result = Future.failedFuture(e);
        }
        if (begin != 0) {
            String function = values.isEmpty() ? "" : String.valueOf(values.get(0));
            Meters.Operation m = meters.computeIfAbsent(function, f -> Meters.operation(SERVED_METER, false,
                    "worker", worker.self().name(), "function", f));
            result.onComplete(r -> m.record(begin, 0, r.cause()));
        }
        return result;
    }

    @Override
    public Future<Object> invoke(WorkerInfo caller, List<Object> values) {
        if (values.isEmpty() || !(values.get(0) instanceof String function)) {
            return Future.failedFuture(new RpcException("a call to " + worker.self() + " names no function"));
        }
        List<Object> args = Collections.unmodifiableList(new ArrayList<>(values.subList(1, values.size())));
        if (DistAutogradRuntime.isInternal(function)) {
            return worker.autograd().serve(caller.id(), function, args);
        }
        Future<Object> internal = rrefs.owned().serve(caller, function, args);
        if (internal != null) {
            return internal;
        }
        RpcRegistry registry = worker.options().registry();
        RpcRegistry.SyncFunction f = registry.function(function);
        RpcAsyncFunction af = f == null ? registry.asyncFunction(function) : null;
        if (f == null && af == null) {
            return Future.failedFuture(new IllegalArgumentException("no function '" + function + "' is registered on"
                    + " worker " + worker.self().name()));
        }
        if (f != null) {
            // Off an event loop (a call to this worker itself, made on the caller's thread) it goes to the pool, as
            // the caller's own continuations expect the call to be dispatched, not done, when it returns.
            return f.onEventLoop() && Context.isOnEventLoopThread() ? here(() -> f.function().apply(args))
                    : onPool(() -> f.function().apply(args));
        }
        // The pool's thread is held only until the async function has returned its future.
        Future<Future<?>> started = onPool(() -> af.apply(args));
        return started.compose(later -> later == null ? Future.failedFuture(new IllegalStateException(
                "the async function returned null instead of a Future")) : later.map(v -> (Object) v));
    }

    /**
     * Runs {@code task} on a virtual thread of the worker's pool (at most {@code numWorkerThreads} at once),
     * with {@link RpcAgent#current()} set to the worker's agent and the distributed autograd context current here
     * current there.
     */
    @Override
    public <T> Future<T> onPool(Callable<T> task) {
        Promise<T> result = Promise.promise();
        DistAutogradContext context = worker.autograd().current();
        try {
            executor.execute(RpcTracing.inCurrentContext(() -> run(() -> worker.autograd().callIn(context, task),
                    result)));
        } catch (RejectedExecutionException e) {
            result.fail(new RpcException("the RPC agent of " + worker.self() + " is shut down"));
        }
        return result.future();
    }

    /**
     * Runs {@code task} on the calling thread (the event loop that read the call, for a function of
     * {@link RpcRegistry#registerOnEventLoop}) with {@link RpcAgent#current()} set to the worker's agent; the
     * distributed autograd context of the call is current here already.
     */
    private <T> Future<T> here(Callable<T> task) {
        RpcAgent before = RpcAgent.SERVING.get();
        RpcAgent.SERVING.set(agent);
        try {
            return Future.succeededFuture(task.call());
        } catch (Throwable t) {
            return Future.failedFuture(t);
        } finally {
            if (before == null) {
                RpcAgent.SERVING.remove();
            } else {
                RpcAgent.SERVING.set(before);
            }
        }
    }

    private <T> void run(Callable<T> task, Promise<T> result) {
        try {
            permits.acquire();
        } catch (InterruptedException e) {
            result.tryFail(new RpcException("the RPC agent of " + worker.self() + " shut down before the call ran"));
            return;
        }
        RpcAgent.SERVING.set(agent);
        try {
            result.tryComplete(task.call());
        } catch (Throwable t) {
            result.tryFail(t);
        } finally {
            RpcAgent.SERVING.remove();
            permits.release();
        }
    }

    /**
     * The RAISE body of {@code t}: class name, message (at most {@value #MAX_MESSAGE} characters), stack text
     * (at most {@value #MAX_STACK}). A throwable whose message or stack cannot be read still answers.
     */
    private byte[] raise(Throwable t) {
        return worker.options().codec().encode(Arrays.asList(t.getClass().getName(), message(t), stack(t)));
    }

    /** {@code t} as the caller sees a failure of a call to this worker. */
    static RpcException asRemote(String worker, String function, Throwable t) {
        return new RemoteException(worker, function, t.getClass().getName(), message(t), stack(t));
    }

    private static String message(Throwable t) {
        try {
            String m = t.getMessage();
            return m == null || m.length() <= MAX_MESSAGE ? m : m.substring(0, MAX_MESSAGE) + "...";
        } catch (RuntimeException e) {
            return "(its message could not be read: " + e.getClass().getName() + ")";
        }
    }

    private static String stack(Throwable t) {
        try {
            StringWriter w = new StringWriter();
            t.printStackTrace(new PrintWriter(w));
            String s = w.toString();
            return s.length() <= MAX_STACK ? s : s.substring(0, MAX_STACK) + "...";
        } catch (RuntimeException e) {
            return "(its stack trace could not be printed: " + e.getClass().getName() + ")";
        }
    }
}
