package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;

/** Runs calls addressed to this worker: decode, look up the function, run it on a virtual thread, answer. */
final class RpcServe {
    /** Longest stack trace sent back, in characters. */
    private static final int MAX_STACK = 8192;
    /** Longest exception message sent back, in characters. */
    private static final int MAX_MESSAGE = 2048;

    private RpcServe() {
    }

    /** Runs the call of {@code values} ({@code [function, args...]}) and answers it on {@code connection}. */
    static void serve(RpcAgent agent, RpcIncoming connection, long id, List<Object> values) {
        invoke(agent, connection.caller(), values).onComplete(r -> {
            if (r.failed()) {
                raise(agent, connection, id, r.cause());
                return;
            }
            try {
                answer(agent, connection, id, RpcPayload.encode(agent.rrefs(), Collections.singletonList(r.result())));
            } catch (RuntimeException e) {
                raise(agent, connection, id, e);
            }
        });
    }

    /** Sends the RETURN of call {@code id}; the RRef forks in it are dropped again if it cannot be sent. */
    private static void answer(RpcAgent agent, RpcIncoming connection, long id, RpcPayload.Encoded value) {
        try {
            if (value.bytes() > connection.callerMaxMessage()) {
                throw new RpcException("the result is " + value.bytes() + " bytes, more than the "
                        + connection.callerMaxMessage() + " the caller accepts (its maxMessageBytes)");
            }
            if (!connection.send(RpcFrame.RETURN, id, value)) {
                agent.rrefs().abort(value.forks());
                return;
            }
        } catch (RuntimeException e) {
            agent.rrefs().abort(value.forks());
            throw e;
        }
        agent.rrefs().commit(value.forks());
    }

    /** Answers call {@code id} with {@code t}, without its stack when that would not fit the caller. */
    private static void raise(RpcAgent agent, RpcIncoming connection, long id, Throwable t) {
        byte[] body = raise(agent, t);
        if (body.length > connection.callerMaxMessage()) {
            String m = message(t);
            body = agent.options().codec().encode(Arrays.asList(t.getClass().getName(),
                    m == null || m.length() <= 200 ? m : m.substring(0, 200) + "...", "(too long to send)"));
        }
        connection.send(RpcFrame.RAISE, id, new RpcPayload.Encoded(body, List.of()));
    }

    /**
     * Runs the function of {@code values} ({@code [function, args...]}) that {@code caller} called; the future
     * holds its result.
     */
    static Future<Object> invoke(RpcAgent agent, WorkerInfo caller, List<Object> values) {
        if (values.isEmpty() || !(values.get(0) instanceof String function)) {
            return Future.failedFuture(new RpcException("a call to " + agent.self() + " names no function"));
        }
        List<Object> args = Collections.unmodifiableList(new ArrayList<>(values.subList(1, values.size())));
        Future<Object> internal = agent.rrefs().owned().serve(caller, function, args);
        if (internal != null) {
            return internal;
        }
        RpcFunction f = agent.options().registry().function(function);
        RpcAsyncFunction af = agent.options().registry().asyncFunction(function);
        if (f == null && af == null) {
            return Future.failedFuture(new IllegalArgumentException("no function '" + function + "' is registered on"
                    + " worker " + agent.self().name()));
        }
        if (f != null) {
            return onPool(agent, () -> f.apply(args));
        }
        // The pool's thread is held only until the async function has returned its future.
        Future<Future<?>> started = onPool(agent, () -> af.apply(args));
        return started.compose(later -> later == null ? Future.failedFuture(new IllegalStateException(
                "the async function returned null instead of a Future")) : later.map(v -> (Object) v));
    }

    /**
     * Runs {@code task} on a virtual thread of the agent's pool (at most {@code numWorkerThreads} at once),
     * with {@link RpcAgent#current()} set to {@code agent}.
     */
    static <T> Future<T> onPool(RpcAgent agent, Callable<T> task) {
        Promise<T> result = Promise.promise();
        try {
            agent.executor().execute(() -> run(agent, task, result));
        } catch (RejectedExecutionException e) {
            result.fail(new RpcException("the RPC agent of " + agent.self() + " is shut down"));
        }
        return result.future();
    }

    private static <T> void run(RpcAgent agent, Callable<T> task, Promise<T> result) {
        try {
            agent.permits().acquire();
        } catch (InterruptedException e) {
            result.tryFail(new RpcException("the RPC agent of " + agent.self() + " shut down before the call ran"));
            return;
        }
        RpcAgent.SERVING.set(agent);
        try {
            result.tryComplete(task.call());
        } catch (Throwable t) {
            result.tryFail(t);
        } finally {
            RpcAgent.SERVING.remove();
            agent.permits().release();
        }
    }

    /**
     * The RAISE body of {@code t}: class name, message (at most {@value #MAX_MESSAGE} characters), stack text
     * (at most {@value #MAX_STACK}). A throwable whose message or stack cannot be read still answers.
     */
    static byte[] raise(RpcAgent agent, Throwable t) {
        return agent.options().codec().encode(Arrays.asList(t.getClass().getName(), message(t), stack(t)));
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
