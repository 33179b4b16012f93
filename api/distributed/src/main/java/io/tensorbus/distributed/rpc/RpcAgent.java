package io.tensorbus.distributed.rpc;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.autograd.AutogradTransport;
import io.tensorbus.internal.distributed.autograd.DistAutogradRuntime;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One worker of an RPC job (PyTorch's RPC agent): it calls registered functions on other workers and
 * serves theirs. Calls travel over direct connections between workers (one per caller and callee, opened
 * at the first call, the shared secret proven first); the callee runs each call on a virtual thread, at
 * most {@link RpcOptions#numWorkerThreads()} at once. Created by {@link Rpc#init}; thread-safe.
 *
 * <p>A call's future fails with {@link RemoteException} when the function threw, {@link RpcTimeoutException}
 * after its timeout, and {@link RpcException} when the worker was lost, refused the connection or sent a
 * malformed message; calls to other workers are not affected.
 */
public final class RpcAgent {
    private final RpcWorkerTable table;
    private final RpcOptions options;
    private final Vertx vertx;
    private final Runnable releaseVertx;
    private final Store store;
    private final Runnable releaseStore;
    private final NetServer server;
    private final NetClient client;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore permits;
    private final Set<RpcIncoming> incoming = ConcurrentHashMap.newKeySet();
    private final Map<Integer, RpcIncoming> latestIncoming = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicReference<Future<Void>> shutdown = new AtomicReference<>();
    private final RRefContext rrefs;
    private final LocalWorker worker;
    private final RpcCalls calls;
    private final RpcServe serve;
    private final Seams seams = new Seams();
    private final List<Runnable> closers = new CopyOnWriteArrayList<>();
    private volatile List<String> leaks = List.of();
    /** The agent whose worker runs the function on this thread, while it runs. */
    static final ThreadLocal<RpcAgent> SERVING = new ThreadLocal<>();

    /**
     * A distributed autograd context of another worker that no message reached for this many of the agent's
     * timeouts is released here: its initiator is gone without a word (every RPC of it would have timed out).
     */
    static final int CONTEXT_IDLE_TIMEOUTS = 2;

    RpcAgent(RpcWorkerTable table, RpcOptions options, Vertx vertx, Runnable releaseVertx, Store store,
            Runnable releaseStore, NetServer server) {
        this.table = table;
        this.options = options;
        this.vertx = vertx;
        this.releaseVertx = releaseVertx;
        this.store = store;
        this.releaseStore = releaseStore;
        this.server = server;
        this.client = vertx.createNetClient(RpcTransport.clientOptions(options));
        this.permits = new Semaphore(options.numWorkerThreads());
        RRefCodec.register(options.codec());
        this.worker = new LocalWorker(table.self(), options, table, vertx, new DistAutogradRuntime(seams));
        this.rrefs = new RRefContext(worker, seams, seams);
        this.serve = new RpcServe(worker, rrefs, executor, permits, this);
        this.calls = new RpcCalls(worker, client, rrefs, (values, context) -> serve.invoke(self(), values, context));
        Duration idle = options.timeout().multipliedBy(CONTEXT_IDLE_TIMEOUTS);
        long sweep = vertx.setPeriodic(Math.clamp(options.timeout().toMillis() / 2, 100, 60_000),
                t -> worker.autograd().expireIdle(idle));
        onClose(() -> vertx.cancelTimer(sweep));
        registerGauges();
    }

    /** The gauges of this agent ({@link io.tensorbus.distributed.metrics.TensorbusMetrics}), removed at close. */
    private void registerGauges() {
        String name = self().name();
        Meters.PolledMeter[] gauges = {
            Meters.gauge(RpcCalls.CALLS_METER + ".in.flight", calls, RpcCalls::pendingCount, null, "worker", name),
            Meters.gauge(Meters.PREFIX + "rrefs", rrefs, r -> r.owned().size(), null, "worker", name, "role",
                    "owner"),
            Meters.gauge(Meters.PREFIX + "rrefs", rrefs, RRefContext::users, null, "worker", name, "role", "user"),
            Meters.gauge(Meters.PREFIX + "dist.autograd.contexts", worker.autograd(),
                    DistAutogradRuntime::contextCount, null, "worker", name),
        };
        onClose(() -> Arrays.stream(gauges).forEach(Meters.PolledMeter::remove));
    }

    /**
     * The agent of the worker whose function runs on this thread (inside a function called over RPC), else
     * {@link Rpc#agent()}: what a function uses to call further or to make an {@link RRef}.
     *
     * @throws IllegalStateException outside a call when no agent is running in this process
     */
    public static RpcAgent current() {
        RpcAgent a = SERVING.get();
        return a != null ? a : Rpc.agent();
    }

    /** This worker. */
    public WorkerInfo self() {
        return table.self();
    }

    /** Every worker of the job, by rank. */
    public List<WorkerInfo> workers() {
        return table.workers();
    }

    /**
     * The worker called {@code name}.
     *
     * @throws IllegalArgumentException naming the known workers when there is none of that name
     */
    public WorkerInfo workerInfo(String name) {
        return table.byName(name);
    }

    /**
     * The worker of rank {@code id}.
     *
     * @throws IllegalArgumentException when {@code id} is not a rank of the job
     */
    public WorkerInfo workerInfo(int id) {
        return table.byRank(id);
    }

    /** {@link #rpcAsync(WorkerInfo, Duration, String, Object...)} to the worker called {@code to}. */
    public <T> Future<T> rpcAsync(String to, String function, Object... args) {
        return rpcAsync(workerInfo(to), options.timeout(), function, args);
    }

    /** {@link #rpcAsync(WorkerInfo, Duration, String, Object...)} to the worker of rank {@code to}. */
    public <T> Future<T> rpcAsync(int to, String function, Object... args) {
        return rpcAsync(workerInfo(to), options.timeout(), function, args);
    }

    /**
     * Calls {@code function} on {@code to} with {@code args} ({@code rpc_async}); never blocks.
     *
     * @param timeout how long the call may take before its future fails with {@link RpcTimeoutException}
     * @return the result, cast to what the caller expects
     * @throws IllegalArgumentException for a worker not of this job, a bad function name, or an argument the
     *     codec cannot encode (the message names its type)
     * @throws IllegalStateException after shutdown
     */
    public <T> Future<T> rpcAsync(WorkerInfo to, Duration timeout, String function, Object... args) {
        if (closed.get()) {
            throw new IllegalStateException("the RPC agent of " + self() + " is shut down");
        }
        return calls.rpcAsync(table.check(to), timeout, function, args);
    }

    /**
     * {@code rpc_sync}: {@link #rpcAsync(WorkerInfo, Duration, String, Object...)} and waits for the result. The
     * result's tensors (at the top or in lists and map values) belong to this thread's open {@code MemoryScope},
     * if any, as tensors allocated here would: they go back to the host cache when it closes, as PyTorch frees a
     * result nothing refers to any more.
     *
     * @throws RemoteException, RpcTimeoutException, RpcException as the future would fail
     * @throws IllegalStateException on a Vert.x event-loop thread, which must never block
     */
    public <T> T rpcSync(WorkerInfo to, Duration timeout, String function, Object... args) {
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException("rpcSync blocks, and this is a Vert.x event-loop thread, which must never"
                    + " block: use rpcAsync and compose its future");
        }
        RpcChecks.timeout(timeout);
        Future<T> f = rpcAsync(to, timeout, function, args);
        T result = Blocking.await(f, timeout.plusSeconds(5), "rpcSync '" + function + "' on " + to);
        adoptIntoScope(result, 0);
        return result;
    }

    /** Hands the tensors of a received {@code value} to this thread's open memory scope (none: nothing happens). */
    private static void adoptIntoScope(Object value, int depth) {
        if (value instanceof Tensor t) {
            TensorInternals.adoptIntoScope(t);
        } else if (depth < 64 && value instanceof Collection<?> c) {
            c.forEach(v -> adoptIntoScope(v, depth + 1));
        } else if (depth < 64 && value instanceof Map<?, ?> m) {
            m.values().forEach(v -> adoptIntoScope(v, depth + 1));
        }
    }

    /** {@link #rpcSync(WorkerInfo, Duration, String, Object...)} to the worker called {@code to}. */
    public <T> T rpcSync(String to, String function, Object... args) {
        return rpcSync(workerInfo(to), options.timeout(), function, args);
    }

    /** {@link #rpcSync(WorkerInfo, Duration, String, Object...)} to the worker of rank {@code to}. */
    public <T> T rpcSync(int to, String function, Object... args) {
        return rpcSync(workerInfo(to), options.timeout(), function, args);
    }

    /** {@link #remote(WorkerInfo, Duration, String, Object...)} on the worker called {@code to}. */
    public <T> RRef<T> remote(String to, String function, Object... args) {
        return remote(workerInfo(to), options.timeout(), function, args);
    }

    /** {@link #remote(WorkerInfo, Duration, String, Object...)} on the worker of rank {@code to}. */
    public <T> RRef<T> remote(int to, String function, Object... args) {
        return remote(workerInfo(to), options.timeout(), function, args);
    }

    /**
     * {@code rpc.remote}: runs {@code function(args)} on {@code to}, which keeps the result, and returns a
     * reference to it at once, without waiting. {@link RRef#toHere()} fetches the value (and fails as the
     * function did); {@link RRef#confirmedByOwner()} turns true when {@code to} has acknowledged the
     * creation. Close the reference when done (or let it be collected): {@code to} drops the value when no
     * reference is left.
     *
     * @param timeout how long the owner may take to acknowledge the creation
     * @throws IllegalArgumentException as {@link #rpcAsync(WorkerInfo, Duration, String, Object...)}
     * @throws IllegalStateException after shutdown
     */
    public <T> RRef<T> remote(WorkerInfo to, Duration timeout, String function, Object... args) {
        if (closed.get()) {
            throw new IllegalStateException("the RPC agent of " + self() + " is shut down");
        }
        return rrefs.remote(table.check(to), RpcChecks.timeout(timeout), function, args);
    }

    /**
     * This worker's distributed autograd ({@code torch.distributed.autograd}): contexts that record the RPCs of a
     * forward pass, and the backward pass across the workers they reached.
     */
    public DistAutograd distAutograd() {
        return worker.autograd();
    }

    /**
     * Counters of this agent, as PyTorch's {@code _get_debug_info}: {@code num_owner_rrefs} (values owned
     * here), {@code num_user_rrefs} (references to other workers' values not yet released),
     * {@code num_pending_rref_messages} (RRef control messages not yet acknowledged),
     * {@code num_pending_calls}, {@code num_rref_messages_applied}, {@code num_rref_messages_repeated}
     * (arrived again, or too late, and changed nothing), {@code num_rref_message_retries}, and
     * {@code num_shared_memory_connections} (connections to and from this worker whose frames go through shared
     * memory, {@link RpcOptions#sharedMemory()}). After a graceful shutdown every count of what is held or pending
     * is 0; the totals ({@code num_rref_messages_applied}, {@code _repeated}, {@code _retries}) remain.
     */
    public Map<String, Long> debugInfo() {
        long[] counts = rrefs.owned().counts();
        Map<String, Long> info = new LinkedHashMap<>();
        info.put("num_owner_rrefs", (long) rrefs.owned().size());
        info.put("num_user_rrefs", (long) rrefs.users());
        info.put("num_pending_rref_messages", (long) rrefs.control().pending());
        info.put("num_pending_calls", (long) calls.pendingCount());
        info.put("num_rref_messages_applied", counts[0]);
        info.put("num_rref_messages_repeated", counts[1]);
        info.put("num_rref_message_retries", rrefs.control().retries());
        info.put("num_shared_memory_connections", calls.sharedMemoryConnections()
                + incoming.stream().filter(RpcIncoming::isSharedMemory).count());
        return info;
    }

    /**
     * The leak report of the last shutdown: one line per value this worker still owned with users left,
     * and per reference to another worker's value it never released. Empty before shutdown and after a
     * clean one.
     */
    public List<String> rrefLeaks() {
        return leaks;
    }

    /**
     * {@code rpc.shutdown(graceful)} within {@link RpcOptions#initTimeout()}: see
     * {@link #shutdown(boolean, Duration)}.
     */
    public Future<Void> shutdown(boolean graceful) {
        return shutdown(graceful, options.initTimeout());
    }

    /**
     * {@code rpc.shutdown(graceful, timeout)}: with {@code graceful}, waits until this worker's own calls have
     * completed, then until every worker has said the same (serving their calls meanwhile, so nested calls
     * finish), and closes; it fails, closing anyway, once {@code timeout} has passed, and at once when a worker of
     * the job is known gone (a connection to it closed, or it left the cluster), naming it, since that worker will
     * never say it is done. Without {@code graceful}, closes at once and fails the calls in flight; that also
     * aborts a graceful shutdown under way (whose future then fails), which is what the exit hook does when the
     * process is told to stop. A later call returns the first one's future, but for that abort.
     *
     * @throws IllegalArgumentException when {@code timeout} is null, zero or negative
     */
    public Future<Void> shutdown(boolean graceful, Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("the shutdown timeout must be positive, got " + timeout);
        }
        Promise<Void> mine = Promise.promise();
        if (!shutdown.compareAndSet(null, mine.future())) {
            if (!graceful) {
                closeNow("the RPC agent of " + self() + " was shut down (a graceful shutdown was aborted)");
            }
            return shutdown.get();
        }
        if (!graceful) {
            closeNow("the RPC agent of " + self() + " was shut down");
            mine.complete();
            return mine.future();
        }
        AtomicBoolean ended = new AtomicBoolean();
        onClose(() -> {
            if (!ended.get()) {
                mine.tryFail(new RpcException("the graceful shutdown of " + self() + " was aborted: the agent was "
                        + "closed (shutdown(false), or the process is exiting)"));
            }
        });
        RpcShutdown.graceful(worker, store, timeout, this::hasPendingCalls, calls::gone, this::reportLeaks)
                .onComplete(r -> {
                    ended.set(true);
                    closeNow("the RPC agent of " + self() + " was shut down");
                    if (r.succeeded()) {
                        mine.tryComplete();
                    } else {
                        mine.tryFail(r.cause());
                    }
                });
        return mine.future();
    }

    /**
     * Blocking {@link #shutdown(boolean) shutdown(true)}.
     *
     * @throws RpcException when the other workers did not all shut down within the deadline, or a worker is known
     *     gone (this worker is closed anyway)
     */
    public void shutdown() {
        shutdown(options.initTimeout());
    }

    /**
     * Blocking {@link #shutdown(boolean, Duration) shutdown(true, timeout)}: PyTorch's
     * {@code rpc.shutdown(graceful=True, timeout=...)}.
     *
     * @throws RpcException when the other workers did not all shut down within {@code timeout}, or a worker is
     *     known gone (this worker is closed anyway)
     * @throws IllegalArgumentException when {@code timeout} is null, zero or negative
     */
    public void shutdown(Duration timeout) {
        Future<Void> done = shutdown(true, timeout);
        Blocking.await(done, timeout.plusSeconds(5), "RPC shutdown of " + self());
    }

    // ---- package-private plumbing ------------------------------------------------------------------------

    /** The options this agent runs with (its timeout, limits, registry). */
    public RpcOptions options() {
        return options;
    }

    Vertx vertx() {
        return vertx;
    }

    RpcWorkerTable table() {
        return table;
    }

    /** True while calls of this worker, or its RRef messages, wait for an answer. */
    boolean hasPendingCalls() {
        return calls.pendingCount() > 0 || rrefs.busy();
    }

    RRefContext rrefs() {
        return rrefs;
    }

    /** Takes the leak report (every worker's RRef messages are done) and logs it. */
    void reportLeaks() {
        List<String> lines = rrefs.leaks();
        leaks = List.copyOf(lines);
        if (!lines.isEmpty()) {
            System.getLogger(RpcAgent.class.getName()).log(System.Logger.Level.WARNING,
                    "RRefs not released at the shutdown of " + self() + ":\n  " + String.join("\n  ", lines));
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Serves {@code socket}, a connection a caller opened that proved the secret; not started yet. */
    RpcIncoming accepted(NetSocket socket) {
        RpcIncoming connection = new RpcIncoming(worker, rrefs, serve, seams, socket);
        incoming.add(connection);
        return connection;
    }

    /** Runs {@code action} when the agent closes (after shutdown or on failure). */
    void onClose(Runnable action) {
        closers.add(action);
    }

    /** True when {@code worker} is gone for good (its node left the cluster: {@link RpcCalls#lost}). */
    boolean isLost(WorkerInfo worker) {
        return calls.isLost(worker);
    }

    /** Who this worker is and what it runs on, for collaborators that need no more of the agent. */
    LocalWorker worker() {
        return worker;
    }

    /** The call path, for the connections that carry its calls and answers. */
    RpcCalls calls() {
        return calls;
    }

    private void closeNow(String why) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Rpc.forget(this);
        closers.forEach(Runnable::run);
        calls.closeAll(why);
        worker.autograd().close();
        List.copyOf(incoming).forEach(RpcIncoming::close);
        incoming.clear();
        latestIncoming.clear();
        executor.shutdownNow();
        server.close().onComplete(r -> {
            releaseStore.run();
            releaseVertx.run();
        });
    }

    /** The narrow faces of this agent that the RRef protocol, its owner table and the connections are given. */
    private final class Seams implements RRefTransport, RpcServing, RpcConnections, AutogradTransport {
        @Override
        public int self() {
            return table.self().id();
        }

        @Override
        public int worldSize() {
            return table.workers().size();
        }

        @Override
        public String describe(int id) {
            return table.byRank(id).toString();
        }

        @Override
        public Duration timeout() {
            return options.timeout();
        }

        @Override
        public Future<Object> call(int to, String function, List<Object> args) {
            try {
                return RpcAgent.this.rpcAsync(table.byRank(to), options.timeout(), function, args.toArray());
            } catch (RuntimeException e) {
                return Future.failedFuture(e);
            }
        }

        @Override
        public <T> Future<T> rpcAsync(WorkerInfo to, Duration timeout, String function, Object... args) {
            return RpcAgent.this.rpcAsync(to, timeout, function, args);
        }

        @Override
        public boolean isClosed() {
            return RpcAgent.this.isClosed();
        }

        @Override
        public boolean isLost(WorkerInfo worker) {
            return RpcAgent.this.isLost(worker);
        }

        @Override
        public void onClose(Runnable action) {
            RpcAgent.this.onClose(action);
        }

        @Override
        public Future<Object> invoke(WorkerInfo caller, List<Object> values) {
            return serve.invoke(caller, values, null);
        }

        @Override
        public <T> Future<T> onPool(Callable<T> task) {
            return serve.onPool(task);
        }

        @Override
        public void welcomed(RpcIncoming connection) {
            RpcIncoming older = latestIncoming.put(connection.caller().id(), connection);
            if (older != null && older != connection) {
                older.supersede();
            }
        }

        @Override
        public void closed(RpcIncoming connection) {
            incoming.remove(connection);
            if (connection.caller() != null) {
                latestIncoming.remove(connection.caller().id(), connection);
            }
        }
    }
}
