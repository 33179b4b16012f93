package io.tensorbus.distributed.rpc;

import io.netty.util.ReferenceCountUtil;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.PrefixStore;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.internal.distributed.RankDefault;
import io.tensorbus.internal.distributed.RankEnvironment;
import io.tensorbus.internal.distributed.TimelineClock;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.distributed.impl.Rendezvous;
import io.tensorbus.distributed.impl.SetupWatch;
import io.tensorbus.spi.support.SecretHandshake;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code torch.distributed.rpc}: {@link #init} joins an RPC job and returns this worker's
 * {@link RpcAgent}, through which it calls the functions other workers registered
 * ({@link RpcAgent#rpcSync}, {@link RpcAgent#rpcAsync}) and serves its own. The first agent a process
 * starts is also available as {@link #agent()}, as PyTorch's module-level functions use one agent per
 * process; where ranks run as threads of one JVM ({@code tensorbus launch --ranks-as-threads}), per rank.
 *
 * <p>{@link RpcAgent#remote} makes a remote reference ({@link RRef}) to a value that stays on the callee;
 * {@link RRef#of} makes one to a local value. See {@code docs/rpc-design.md} for the protocol.
 */
public final class Rpc {
    /** The default agent: the process's, or each rank thread's. */
    private static final RankDefault<RpcAgent> DEFAULTS = new RankDefault<>();

    private Rpc() {
    }

    /**
     * {@code init_rpc}: meets the other {@code worldSize - 1} workers through the options' init method or
     * store, each publishing its name and the address it accepts calls on, and completes with this
     * worker's agent once all have.
     *
     * @throws IllegalArgumentException (as a failed future for rendezvous problems) for a bad name, rank
     *     or world size; two workers with one name fail init on every worker naming both ranks
     */
    public static Future<RpcAgent> init(String name, int rank, int worldSize, RpcOptions options) {
        RpcChecks.name(name);
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("need 0 <= rank < worldSize, got rank=" + rank + " worldSize="
                    + worldSize);
        }
        if (options == null) {
            throw new NullPointerException("options");
        }
        Vertx vertx = options.vertx() != null ? options.vertx() : Distributed.newVertx();
        Runnable releaseVertx = options.vertx() != null ? () -> { } : vertx::close;
        InitOptions.Builder io = InitOptions.builder().rank(rank).worldSize(worldSize).timeout(options.initTimeout())
                .environment(options.environment()).vertx(vertx).secret(options.secret());
        if (options.bindHost() != null) {
            io.property("tcp.bindHost", options.bindHost());
        }
        if (options.store() != null) {
            io.store(options.store());
        } else {
            io.initMethod(options.initMethod());
        }
        InitOptions init = io.build();
        Object scope = RankEnvironment.scope();
        return Rendezvous.resolve(init, vertx)
                .compose(rv -> {
                    Store store = new PrefixStore("rpc", rv.store());
                    Runnable releaseStore = options.store() != null ? () -> { } : rv.store()::close;
                    String who = name + " (rank " + rv.rank() + ", " + rv.advertiseHost() + ")";
                    return SetupWatch.run(vertx, store, null, "the RPC agent", who, init.setupTimeout(),
                            () -> start(name, rv, store, releaseStore, options, vertx, releaseVertx),
                            a -> a.shutdown(false)).onFailure(e -> releaseStore.run());
                })
                .onSuccess(agent -> DEFAULTS.offer(scope, agent))
                .onFailure(e -> releaseVertx.run());
    }

    /**
     * The agent this process started first and has not shut down; on a rank that runs as a thread, the agent that
     * rank (or a thread it started) started first.
     *
     * @throws IllegalStateException before {@link #init} completed, or after that agent shut down
     */
    public static RpcAgent agent() {
        RpcAgent a = DEFAULTS.get();
        if (a == null) {
            throw new IllegalStateException("RPC is not initialised in this process: call Rpc.init first");
        }
        return a;
    }

    /** Called by an agent that shuts down: it stops being the default. */
    static void forget(RpcAgent agent) {
        DEFAULTS.withdraw(agent);
    }

    /** Starts the agent; on failure it releases what it made but the store, which the caller releases. */
    private static Future<RpcAgent> start(String name, Rendezvous rv, Store store, Runnable releaseStore,
            RpcOptions options, Vertx vertx, Runnable releaseVertx) {
        // A caller may connect as soon as the table is complete, before this worker has built its agent.
        Promise<RpcAgent> agent = Promise.promise();
        try {
            if (!options.usesTls()) {
                // Mutual TLS authenticates every connection by itself; without it, no secret means loopback only.
                options.secret().checkBind(rv.bindHost(), "RPC worker " + name);
            }
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        NetServer server = vertx.createNetServer(RpcTransport.serverOptions(options, rv.bindHost()));
        // The call timeout, if shorter: a stranger's unauthenticated socket must not stay open for hours.
        Duration handshake = options.timeout().compareTo(SecretHandshake.TIMEOUT) < 0 ? options.timeout()
                : SecretHandshake.TIMEOUT;
        server.connectHandler(socket -> SecretHandshake.accept(socket, options.secret(), RpcTransport.CHANNEL,
                handshake, vertx).onSuccess(v -> serveOnceStarted(agent.future(), socket)));
        // A graceful shutdown of an earlier job on this store left its last key, and maybe a lost worker's; rank 0
        // clears them before any worker of this job can count itself out.
        Future<Void> fresh = rv.rank() == 0 ? Future.all(store.deleteKey(RpcShutdown.LEFT_ALL),
                store.deleteKey(RpcShutdown.LOST)).mapEmpty() : Future.succeededFuture();
        return fresh.compose(v -> server.listen().recover(e -> Future.failedFuture(new RpcException(name + " cannot"
                        + " accept calls on " + rv.bindHost() + ": " + e.getMessage(), e))))
                .compose(s -> store.set("worker/" + rv.rank(), (name + "\n" + rv.advertiseHost() + "\n"
                        + s.actualPort() + "\n" + RpcMembership.node(vertx) + "\n" + sharedMemoryHost(options))
                        .getBytes(StandardCharsets.UTF_8)))
                .compose(v -> table(store, rv.rank(), rv.worldSize(), options))
                .map(t -> {
                    RpcAgent a = new RpcAgent(t, options, vertx, releaseVertx, store, releaseStore, server);
                    ProcessExit.Registration atExit = ProcessExit.closeAtExit("RPC agent " + a.self(),
                            () -> a.shutdown(false));
                    a.onClose(atExit::done);
                    RpcMembership.watch(a.worker(), a.calls(), a::onClose);
                    agent.complete(a);
                    return a;
                })
                .compose(a -> timeline(a, rv, store, options).map(a))
                .onFailure(e -> {
                    agent.tryFail(e);
                    server.close();
                });
    }

    /**
     * Opens this worker's timeline when its environment asks for one ({@value TimelineRecorder#ENV}) and no process
     * group of its rank opened it already, and measures its clock against rank 0's through the agent's store, so that
     * a job of RPC alone has a timeline too; it closes with the agent.
     */
    private static Future<Void> timeline(RpcAgent a, Rendezvous rv, Store store, RpcOptions options) {
        if (TimelineRecorder.of(rv.rank()) != null) {
            return Future.succeededFuture();
        }
        TimelineRecorder t = TimelineRecorder.open(options.environment(), rv.rank());
        if (t == null) {
            return Future.succeededFuture();
        }
        a.onClose(t::close);
        return TimelineClock.sync(store, rv.rank(), rv.worldSize(), t, options.initTimeout());
    }

    /**
     * Hands a connection that proved the secret to the agent once it exists. Until then its bytes wait, raw:
     * the frame parser reads Netty's buffers as they came.
     */
    private static void serveOnceStarted(Future<RpcAgent> agent, NetSocket socket) {
        ((NetSocketInternal) socket).messageHandler(ReferenceCountUtil::release);
        socket.pause();
        agent.onComplete(r -> {
            if (r.failed() || r.result().isClosed()) {
                // Drain what waited (released by the handler above) before closing: pooled buffers.
                socket.resume();
                socket.close();
                return;
            }
            r.result().accepted(socket).start();
            socket.resume();
        });
    }

    private static Future<RpcWorkerTable> table(Store store, int rank, int world, RpcOptions options) {
        List<String> keys = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            keys.add("worker/" + r);
        }
        return store.wait(keys, options.initTimeout()).compose(v -> {
            List<Future<byte[]>> values = keys.stream().map(store::get).toList();
            return Future.all(values).map(all -> {
                List<WorkerInfo> workers = new ArrayList<>();
                List<RpcWorkerTable.Address> addresses = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    String[] parts = new String(values.get(r).result(), StandardCharsets.UTF_8).split("\n");
                    workers.add(new WorkerInfo(parts[0], r));
                    addresses.add(new RpcWorkerTable.Address(parts[1], Integer.parseInt(parts[2]),
                            parts.length > 3 ? parts[3] : "", parts.length > 4 ? parts[4] : ""));
                }
                return new RpcWorkerTable(rank, workers, addresses);
            });
        });
    }

    /**
     * This worker's shared-memory host identity as its callers compare it with their own (boot id and the
     * device of the channel directory), or empty when it takes no shared-memory connections.
     */
    private static String sharedMemoryHost(RpcOptions options) {
        String host = options.sharedMemory() ? SharedMemoryChannel.hostIdentity(options.sharedMemoryDir()) : null;
        return host == null ? "" : host;
    }
}
