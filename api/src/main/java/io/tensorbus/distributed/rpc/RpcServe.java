package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/** Runs calls addressed to this worker: decode, look up the function, run it on a virtual thread, answer. */
final class RpcServe {
    /** Longest stack trace sent back, in characters. */
    private static final int MAX_STACK = 8192;

    private RpcServe() {
    }

    /** Runs the call in {@code body} for {@code caller} and answers it on {@code connection}. */
    static void serve(RpcAgent agent, RpcIncoming connection, WorkerInfo caller, long id, byte[] body) {
        invoke(agent, body).onComplete(r -> {
            if (r.succeeded()) {
                byte[] value;
                try {
                    value = agent.options().codec().encode(Collections.singletonList(r.result()));
                } catch (RuntimeException e) {
                    connection.send(RpcFrame.RAISE, id, raise(agent, e));
                    return;
                }
                connection.send(RpcFrame.RETURN, id, value);
            } else {
                connection.send(RpcFrame.RAISE, id, raise(agent, r.cause()));
            }
        });
    }

    /** Decodes {@code body} ({@code [function, args]}) and runs the function; the future holds its result. */
    @SuppressWarnings("unchecked")
    static Future<Object> invoke(RpcAgent agent, byte[] body) {
        String function;
        List<Object> args;
        try {
            List<Object> call = (List<Object>) agent.options().codec().decode(body, List.class);
            function = (String) call.get(0);
            args = (List<Object>) call.get(1);
        } catch (RuntimeException e) {
            return Future.failedFuture(new RpcException("a call to " + agent.self() + " does not decode: "
                    + e.getMessage(), e));
        }
        RpcFunction f = agent.options().registry().function(function);
        RpcAsyncFunction af = agent.options().registry().asyncFunction(function);
        if (f == null && af == null) {
            return Future.failedFuture(new IllegalArgumentException("no function '" + function + "' is registered on"
                    + " worker " + agent.self().name()));
        }
        Promise<Object> result = Promise.promise();
        agent.executor().execute(() -> run(agent, f, af, args, result));
        return result.future();
    }

    private static void run(RpcAgent agent, RpcFunction f, RpcAsyncFunction af, List<Object> args,
            Promise<Object> result) {
        try {
            agent.permits().acquire();
        } catch (InterruptedException e) {
            result.tryFail(new RpcException("the RPC agent of " + agent.self() + " shut down before the call ran"));
            return;
        }
        try {
            if (f != null) {
                result.tryComplete(f.apply(args));
            } else {
                Future<?> later = af.apply(args);
                if (later == null) {
                    result.tryFail(new IllegalStateException("the async function returned null instead of a Future"));
                } else {
                    later.onComplete(r -> {
                        if (r.succeeded()) {
                            result.tryComplete(r.result());
                        } else {
                            result.tryFail(r.cause());
                        }
                    });
                }
            }
        } catch (Throwable t) {
            result.tryFail(t);
        } finally {
            agent.permits().release();
        }
    }

    /** The RAISE body of {@code t}: class name, message, stack text. */
    static byte[] raise(RpcAgent agent, Throwable t) {
        return agent.options().codec().encode(Arrays.asList(t.getClass().getName(), t.getMessage(), stack(t)));
    }

    /** {@code t} as the caller sees a failure of a call to this worker. */
    static RpcException asRemote(String worker, String function, Throwable t) {
        return new RemoteException(worker, function, t.getClass().getName(), t.getMessage(), stack(t));
    }

    private static String stack(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        String s = w.toString();
        return s.length() <= MAX_STACK ? s : s.substring(0, MAX_STACK) + "...";
    }
}
