package io.tensorbus.distributed.rpc;

import io.tensorbus.spi.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.List;

/**
 * The graceful shutdown of PyTorch's {@code _wait_all_workers}, through the rendezvous store: a worker
 * whose own calls are all answered counts itself in; once every worker has, they all close. Until then
 * each keeps serving, so a call that nests further calls still finishes. A second count lets the worker
 * that hosts the store close it last.
 */
final class RpcShutdown {
    private static final Duration POLL = Duration.ofMillis(5);
    private static final Duration LAST_LEAVE = Duration.ofSeconds(10);

    private RpcShutdown() {
    }

    static Future<Void> graceful(RpcAgent agent) {
        Store store = agent.store();
        int world = agent.workers().size();
        Duration deadline = agent.options().initTimeout();
        return idle(agent, System.nanoTime() + deadline.toNanos())
                .compose(v -> countIn(store, "shutdown/ready", world))
                .compose(v -> store.wait(List.of("shutdown/ready/all"), deadline))
                .compose(v -> countIn(store, "shutdown/left", world))
                .compose(v -> store.wait(List.of("shutdown/left/all"), LAST_LEAVE)
                        .recover(e -> Future.succeededFuture()));
    }

    /** Adds this worker to {@code counter}; the last one in sets {@code counter/all}. */
    private static Future<Void> countIn(Store store, String counter, int world) {
        return store.add(counter, 1).compose(n -> n >= world
                ? store.set(counter + "/all", new byte[] {1}) : Future.succeededFuture());
    }

    /** Completes when the agent has no call of its own pending, or fails at {@code deadlineNanos}. */
    private static Future<Void> idle(RpcAgent agent, long deadlineNanos) {
        Promise<Void> done = Promise.promise();
        poll(agent, deadlineNanos, done);
        return done.future();
    }

    private static void poll(RpcAgent agent, long deadlineNanos, Promise<Void> done) {
        if (!agent.hasPendingCalls()) {
            done.tryComplete();
        } else if (System.nanoTime() > deadlineNanos) {
            done.tryFail(new RpcException("the calls of " + agent.self() + " were still pending at the shutdown"
                    + " deadline"));
        } else {
            agent.vertx().setTimer(POLL.toMillis(), t -> poll(agent, deadlineNanos, done));
        }
    }
}
