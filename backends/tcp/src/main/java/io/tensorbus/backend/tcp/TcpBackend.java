package io.tensorbus.backend.tcp;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.CollectiveMismatchException;
import io.tensorbus.spi.CommunicationException;
import io.tensorbus.spi.CommunicationTimeoutException;
import io.tensorbus.spi.DType;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.PeerLostException;
import io.tensorbus.spi.ReduceOp;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The tcp backend of one process group: a full mesh of Vert.x connections (one per peer pair) that all run
 * on one event loop, so that the matching state needs no locks. Collectives are numbered in call order;
 * every frame carries the collective's number and fingerprint. Small reductions use recursive doubling and
 * binomial trees (latency), large ones rings and chains cut into pipelined chunks (bandwidth).
 *
 * <p>Failure policy, as NCCL's: a collective that fails (mismatch, timeout, lost peer, malformed frame)
 * breaks the group, and every pending and later operation fails with the first cause. A point-to-point
 * operation that times out fails alone.
 */
final class TcpBackend implements Backend {
    /** Reductions up to this size use the latency-optimal algorithms. */
    static final long SMALL_BYTES = 64 * 1024;
    /** How long a stall report waits for the peers' answers, at most, in milliseconds. */
    static final long STATUS_WAIT_MILLIS = 500;

    private final BackendOptions options;
    private final VertxInternal vertx;
    private final ContextInternal context;
    private final Router router = new Router();
    private final PeerConnection[] peers;
    private final AtomicLong calls = new AtomicLong();
    private final Map<Long, CollectiveOp> active = new HashMap<>();
    private final Map<Long, StallReport> reports = new HashMap<>();
    private final long chunkBytes;
    private final int groupHash;
    private final Runnable onClose;
    /** Per peer: the number of collectives it called before it left in order, or -1 while it is here. */
    private final long[] departed;
    private volatile CommunicationException broken;
    private volatile boolean closed;

    TcpBackend(BackendOptions options, ContextInternal context, Runnable onClose) {
        this.options = options;
        this.vertx = (VertxInternal) options.vertx();
        this.context = context;
        this.peers = new PeerConnection[options.worldSize()];
        this.chunkBytes = Long.parseLong(options.property("tcp.chunkBytes", String.valueOf(1 << 20)));
        this.groupHash = options.groupName().hashCode();
        this.onClose = onClose;
        this.departed = new long[options.worldSize()];
        java.util.Arrays.fill(departed, -1);
    }

    @Override
    public String name() {
        return TcpBackendProvider.NAME;
    }

    @Override
    public int rank() {
        return options.rank();
    }

    @Override
    public int size() {
        return options.worldSize();
    }

    int groupHash() {
        return groupHash;
    }

    long chunkBytes() {
        return chunkBytes;
    }

    Router router() {
        return router;
    }

    VertxInternal vertx() {
        return vertx;
    }

    ContextInternal context() {
        return context;
    }

    PeerConnection connection(int peer) {
        return peers[peer];
    }

    void attach(PeerConnection connection) {
        peers[connection.peer()] = connection;
    }

    /** "rank 2" or, in a subgroup, "rank 2 (global 5)". */
    String who(int groupRank) {
        int global = options.globalRanks()[groupRank];
        return global == groupRank ? "rank " + groupRank : "rank " + groupRank + " (global " + global + ")";
    }

    // ---- point-to-point -------------------------------------------------------------------------------

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        Promise<Void> promise = context.promise();
        context.runOnContext(v -> {
            if (failIfBroken(promise, "send to " + who(dst))) {
                return;
            }
            Frame header = new Frame(Frame.DATA, Opcode.SEND.code, buffer.dtype().ordinal(), Frame.NO_REDUCE, -1, -1,
                    tag, buffer.numel(), 0, groupHash, buffer.byteSize(), 0);
            long timer = vertx.setTimer(options.timeout().toMillis(), id -> promise.tryFail(p2pTimeout("send to", dst, tag)));
            peers[dst].write(header, buffer.segment()).onComplete(ar -> {
                vertx.cancelTimer(timer);
                if (ar.succeeded()) {
                    promise.tryComplete();
                } else {
                    promise.tryFail(broken != null ? broken : lost(dst, -1, "send to " + who(dst), ar.cause()));
                }
            });
        });
        return promise.future();
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        Promise<Integer> promise = context.promise();
        context.runOnContext(v -> {
            if (failIfBroken(promise, "recv from " + (src < 0 ? "any rank" : who(src)))) {
                return;
            }
            Router.Pending p = router.expectP2p(src, tag, Sink.copyInto(buffer.segment()), buffer.dtype());
            long timer = vertx.setTimer(options.timeout().toMillis(), id -> {
                router.withdraw(p);
                p.promise.tryFail(p2pTimeout("recv from", src, tag));
            });
            p.promise.future().onComplete(ar -> {
                vertx.cancelTimer(timer);
                promise.handle(ar);
            });
        });
        return promise.future();
    }

    private CommunicationTimeoutException p2pTimeout(String what, int peer, int tag) {
        String whom = peer < 0 ? "any rank" : who(peer);
        return new CommunicationTimeoutException(options.groupName(), -1, what + " " + whom + " (tag " + tag
                + ") in group '" + options.groupName() + "' timed out after " + options.timeout() + " on "
                + who(rank()), peer < 0 ? new int[0] : new int[] {peer});
    }

    private boolean failIfBroken(Promise<?> promise, String what) {
        CommunicationException b = broken;
        if (b == null && !closed) {
            return false;
        }
        String why = b == null ? "the group was closed" : b.getMessage();
        promise.tryFail(new CommunicationException(options.groupName(), -1, what + " in group '"
                + options.groupName() + "' cannot run: " + why, b));
        return true;
    }

    // ---- collectives ----------------------------------------------------------------------------------

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        Call call = new Call(Opcode.BROADCAST, buffer.dtype(), null, root, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> small ? BinomialTree.broadcast(op, buffer.segment(), root)
                : Chain.broadcast(op, buffer.segment(), root));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp reduceOp) {
        Call call = new Call(Opcode.ALL_REDUCE, buffer.dtype(), reduceOp, -1, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> (small ? RecursiveDoubling.allReduce(op, buffer.segment(), reduceOp, buffer.dtype())
                : RingAllReduce.run(op, buffer.segment(), reduceOp, buffer.dtype()))
                .map(v -> average(buffer, reduceOp)));
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp reduceOp) {
        Call call = new Call(Opcode.REDUCE, buffer.dtype(), reduceOp, root, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> (small ? BinomialTree.reduce(op, buffer.segment(), root, reduceOp, buffer.dtype())
                : Chain.reduce(op, buffer.segment(), root, reduceOp, buffer.dtype()))
                .map(v -> rank() == root ? average(buffer, reduceOp) : null));
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        Call call = new Call(Opcode.ALL_GATHER, input.dtype(), null, -1, input.numel(), input.shape());
        return collective(call, op -> RingAllGather.run(op, segments(outputs), input.segment()));
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        Call call = new Call(Opcode.GATHER, input.dtype(), null, root, input.numel(), input.shape());
        return collective(call, op -> DirectExchange.gather(op, segments(outputs), input.segment(), root));
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        Call call = new Call(Opcode.SCATTER, output.dtype(), null, root, output.numel(), output.shape());
        return collective(call, op -> DirectExchange.scatter(op, output.segment(), segments(inputs), root));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp reduceOp) {
        Call call = new Call(Opcode.REDUCE_SCATTER, output.dtype(), reduceOp, -1, output.numel(), output.shape());
        return collective(call, op -> RingReduceScatter.run(op, output.segment(), segments(inputs), reduceOp,
                output.dtype()).map(v -> average(output, reduceOp)));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        DType dtype = inputs.isEmpty() ? DType.FLOAT32 : inputs.getFirst().dtype();
        Call call = new Call(Opcode.ALL_TO_ALL, dtype, null, -1, -1, null);
        return collective(call, op -> DirectExchange.allToAll(op, segments(outputs), segments(inputs)));
    }

    @Override
    public Future<Void> barrier() {
        Call call = new Call(Opcode.BARRIER, DType.BOOL, null, -1, 0, new long[0]);
        return collective(call, DisseminationBarrier::run);
    }

    private Void average(DeviceBuffer buffer, ReduceOp reduceOp) {
        if (reduceOp == ReduceOp.AVG) {
            io.tensorbus.spi.HostReductions.divide(buffer.dtype(), buffer.segment(), size());
        }
        return null;
    }

    private static List<java.lang.foreign.MemorySegment> segments(List<DeviceBuffer> buffers) {
        List<java.lang.foreign.MemorySegment> out = new ArrayList<>(buffers.size());
        for (DeviceBuffer b : buffers) {
            out.add(b.segment());
        }
        return out;
    }

    private Future<Void> collective(Call call, Function<CollectiveOp, Future<Void>> algorithm) {
        CollectiveOp op = new CollectiveOp(this, calls.getAndIncrement(), call);
        context.runOnContext(v -> start(op, algorithm));
        return op.promise.future();
    }

    private void start(CollectiveOp op, Function<CollectiveOp, Future<Void>> algorithm) {
        if (failIfBroken(op.promise, describe(op))) {
            return;
        }
        active.put(op.sequence, op);
        if (failIfDeparted(op)) {
            return;
        }
        for (Router.Early e : router.earlyFor(op.sequence)) {
            if (!op.call.matches(e.frame)) {
                mismatch(op, e.peer, e.frame);
                return;
            }
        }
        op.timer = vertx.setTimer(options.timeout().toMillis(), id -> timedOut(op));
        Future<Void> done;
        try {
            done = size() == 1 ? Future.succeededFuture() : algorithm.apply(op);
        } catch (RuntimeException e) {
            done = Future.failedFuture(e);
        }
        done.onComplete(ar -> {
            if (ar.succeeded()) {
                finish(op);
                op.promise.tryComplete();
            } else {
                breakGroup(asCommunicationFailure(op, ar.cause()));
            }
        });
    }

    private void finish(CollectiveOp op) {
        active.remove(op.sequence);
        if (op.timer >= 0) {
            vertx.cancelTimer(op.timer);
        }
    }

    private CommunicationException asCommunicationFailure(CollectiveOp op, Throwable cause) {
        if (cause instanceof CommunicationException ce) {
            return ce;
        }
        return new CommunicationException(options.groupName(), op.sequence, describe(op) + " failed on "
                + who(rank()) + ": " + cause, cause);
    }

    /** "allReduce(float32[4], SUM) #3 in group 'default'". */
    String describe(CollectiveOp op) {
        return op.call.describe() + " #" + op.sequence + " in group '" + options.groupName() + "'";
    }

    /** A data frame's header arrived: check its fingerprint, then match it with its receive. */
    Sink arrived(PeerConnection conn, Frame frame) {
        if (!frame.isPointToPoint()) {
            CollectiveOp op = active.get(frame.sequence());
            if (op != null && !op.call.matches(frame)) {
                mismatch(op, conn.peer(), frame);
                return Sink.discard(frame.payloadBytes());
            }
        }
        return router.arrived(conn, frame);
    }

    private void mismatch(CollectiveOp op, int peer, Frame frame) {
        CollectiveMismatchException e = new CollectiveMismatchException(options.groupName(), op.sequence,
                "collective mismatch in group '" + options.groupName() + "' at collective #" + op.sequence + ": "
                + who(rank()) + " called " + op.call.describe() + " but " + who(peer) + " called "
                + Call.describe(frame) + " (every rank must call the same collectives in the same order)");
        // Tell the peers, which may be waiting for frames this rank will never send.
        byte[] text = e.getMessage().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.lang.foreign.MemorySegment payload = java.lang.foreign.MemorySegment.ofArray(
                java.util.Arrays.copyOf(text, Math.min(text.length, Frame.MAX_ABORT_BYTES)));
        Frame abort = new Frame(Frame.ABORT, 0, 0, Frame.NO_REDUCE, -1, -1, op.sequence, 0, 0, groupHash,
                payload.byteSize(), 0);
        for (PeerConnection c : peers) {
            if (c != null) {
                c.write(abort, payload);
            }
        }
        breakGroup(e);
    }

    /** A peer gave up on the group and said why. */
    void abortArrived(int peer, String message) {
        if (broken == null && !closed) {
            long seq = active.isEmpty() ? -1 : active.keySet().iterator().next();
            breakGroup(new CollectiveMismatchException(options.groupName(), seq, who(peer) + " aborted group '"
                    + options.groupName() + "': " + message));
        }
    }

    /** Fails every pending operation with {@code cause} (each collective's own message names it). */
    void breakGroup(CommunicationException cause) {
        if (broken == null) {
            broken = cause;
        }
        for (CollectiveOp op : new ArrayList<>(active.values())) {
            finish(op);
            op.promise.tryFail(op.sequence == cause.sequence() ? cause : new CommunicationException(
                    options.groupName(), op.sequence, describe(op) + " failed: " + cause.getMessage(), cause));
        }
        router.failAll(cause);
    }

    /** The connection to {@code peer} is gone or carried garbage. */
    void peerLost(int peer, String why, Throwable cause) {
        if (closed) {
            return;
        }
        if (departed[peer] >= 0) {
            peerLeft(peer);
            return;
        }
        breakGroup(lost(peer, -1, null, cause == null ? new RuntimeException(why) : cause, why));
    }

    /** {@code peer} announced it leaves after {@code collectives} collectives, all of which it finished. */
    void peerDeparting(int peer, long collectives) {
        departed[peer] = collectives;
    }

    /**
     * A peer left in order: operations it finished are unaffected (its data has arrived), but collectives
     * it never called and receives that wait for it alone can never finish.
     */
    private void peerLeft(int peer) {
        router.failFrom(peer, lost(peer, -1, "recv from " + who(peer), null, leftMessage(peer)));
        for (CollectiveOp op : new ArrayList<>(active.values())) {
            failIfDeparted(op);
        }
    }

    private String leftMessage(int peer) {
        return "it left the group after its " + departed[peer] + " collectives";
    }

    private boolean failIfDeparted(CollectiveOp op) {
        for (int p = 0; p < departed.length; p++) {
            if (departed[p] >= 0 && departed[p] <= op.sequence) {
                breakGroup(lost(p, op.sequence, describe(op), null, leftMessage(p)));
                return true;
            }
        }
        return false;
    }

    private PeerLostException lost(int peer, long sequence, String what, Throwable cause) {
        return lost(peer, sequence, what, cause, String.valueOf(cause.getMessage()));
    }

    private PeerLostException lost(int peer, long sequence, String what, Throwable cause, String why) {
        return new PeerLostException(options.groupName(), sequence, peer, (what == null ? "" : what + ": ")
                + "lost " + who(peer) + " of group '" + options.groupName() + "' on " + who(rank()) + ": " + why,
                cause);
    }

    // ---- stall reports ---------------------------------------------------------------------------------

    private void timedOut(CollectiveOp op) {
        op.timer = -1;
        StallReport report = new StallReport(this, op);
        reports.put(op.sequence, report);
        Frame request = new Frame(Frame.STATUS_REQUEST, 0, 0, Frame.NO_REDUCE, -1, -1, op.sequence, 0, 0, groupHash, 0, 0);
        for (PeerConnection c : peers) {
            if (c != null) {
                c.write(request, null);
            }
        }
        vertx.setTimer(Math.min(STATUS_WAIT_MILLIS, Math.max(1, options.timeout().toMillis() / 4)), id -> {
            reports.remove(op.sequence);
            breakGroup(report.exception(options));
        });
    }

    /** The answer to a peer's stall question: how many collectives this rank has called. */
    Frame statusReply(Frame request) {
        return new Frame(Frame.STATUS_REPLY, 0, 0, Frame.NO_REDUCE, -1, -1, request.tag(), 0, 0, groupHash, 0,
                calls.get());
    }

    void statusArrived(int peer, Frame reply) {
        StallReport r = reports.get(reply.tag());
        if (r != null) {
            r.answer(peer, reply.aux());
        }
    }

    // ---- lifecycle --------------------------------------------------------------------------------------

    @Override
    public Future<Void> close() {
        Promise<Void> done = context.promise();
        context.runOnContext(v -> {
            if (!closed) {
                closed = true;
                // Peers may rely on the collectives this rank finished, not on those cut short here.
                long finished = active.keySet().stream().mapToLong(Long::longValue).min().orElse(calls.get());
                breakGroup(new CommunicationException(options.groupName(), -1, "the group '" + options.groupName()
                        + "' was closed on " + who(rank()), null));
                List<Future<Void>> goodbyes = new ArrayList<>();
                for (PeerConnection c : peers) {
                    if (c != null) {
                        goodbyes.add(c.leave(finished));
                    }
                }
                Future.join(goodbyes).onComplete(ar -> {
                    onClose.run();
                    done.tryComplete();
                });
                return;
            }
            done.tryComplete();
        });
        return done.future();
    }
}
