package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendCounter;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.support.shm.SharedMemoryLink;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.ToLongFunction;

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
    /** The chunk size of pipelined algorithms over TCP, in bytes. */
    static final long DEFAULT_CHUNK_BYTES = 16 << 20;
    /** How many finished collectives' calls are remembered (frames of older ones are not checked). */
    private static final int RECENT = 64;

    private final BackendOptions options;
    private final VertxInternal vertx;
    private final ContextInternal context;
    private final StagingPool staging = new StagingPool();
    private final Router router = new Router(staging);
    private final PeerConnection[] peers;
    /**
     * The sequence number of the next collective. Numbered from 1, as the flight recorder and PyTorch's
     * {@code collective_seq_id}: collective #N is the N-th this rank called, in exceptions, dumps and fr-trace alike.
     */
    private final AtomicLong calls = new AtomicLong(1);
    private final Map<Long, CollectiveOp> active = new HashMap<>();
    private final GroupFailure failure;
    private final PointToPoint pointToPoint;
    private final StallReports stallReports;
    /** The chunk size set by {@code tcp.chunkBytes}, or -1 for the default of the group's links. */
    private final long chunkBytes;
    /** The chunk size every member uses, agreed while the mesh is built (the smallest member's preference). */
    private long agreedChunkBytes = -1;
    private final int groupHash;
    private final Runnable onClose;
    /** The calls of the last {@link #RECENT} finished collectives, to check frames that arrive after them. */
    private final Call[] recent = new Call[RECENT];
    private final long[] recentSequence = new long[RECENT];
    private volatile boolean closed;
    private final SharedMemoryOptions sharedMemory;
    private boolean fallbackLogged;
    /**
     * The collectives through the area every member maps, or null when the group has none (set once, during
     * set-up).
     */
    private SharedMemoryCollectives sharedCollectives;
    /**
     * The futures of the last collective called and of the last one on the collective thread: each path starts
     * after the other's earlier work, so that collectives run in call order as on one stream. Caller's thread.
     */
    private volatile Future<Void> lastCollective = Future.succeededFuture();
    private volatile Future<Void> lastShared = Future.succeededFuture();
    /** The collectives running on the collective thread, by sequence number. */
    private final Map<Long, CollectiveOp> sharedOps = new ConcurrentHashMap<>();

    TcpBackend(BackendOptions options, SharedMemoryOptions sharedMemory, ContextInternal context, Runnable onClose) {
        this.options = options;
        this.sharedMemory = sharedMemory;
        this.vertx = (VertxInternal) options.vertx();
        this.context = context;
        this.peers = new PeerConnection[options.worldSize()];
        String chunk = options.property("tcp.chunkBytes", System.getProperty("tensorbus.tcp.chunkBytes"));
        this.chunkBytes = chunk == null ? -1 : Long.parseLong(chunk);
        this.groupHash = options.groupName().hashCode();
        this.onClose = onClose;
        Arrays.fill(recentSequence, -1);
        this.failure = new GroupFailure(this, options);
        this.pointToPoint = new PointToPoint(this, options);
        this.stallReports = new StallReports(this, options);
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

    String groupName() {
        return options.groupName();
    }

    /** What broke the group (its closing too), or null while it works. Any thread. */
    CommunicationException brokenCause() {
        CommunicationException cause = failure.cause();
        if (cause == null && closed) {
            return new CommunicationException(options.groupName(), -1, "the group '" + options.groupName()
                    + "' was closed on " + who(rank()), null);
        }
        return cause;
    }

    /** The collectives through the shared area that the mesh set up; once, before the backend is handed out. */
    void useSharedCollectives(SharedMemoryCollectives collectives) {
        this.sharedCollectives = collectives;
    }

    /** True when host all-reduces, broadcasts and barriers go through the area every member maps. */
    boolean usesSharedCollectives() {
        return sharedCollectives != null;
    }

    /** How many all-reduces of this rank went straight between the buffers of ranks of one process (tests). */
    long inProcessAllReduces() {
        return sharedCollectives == null ? 0 : sharedCollectives.inProcessAllReduces();
    }

    /** See {@link GroupFailure#departedBefore}. Any thread. */
    PeerLostException departedBefore(CollectiveOp op) {
        return failure.departedBefore(op);
    }

    /**
     * The chunk size this rank would cut large buffers into: {@code tcp.chunkBytes} when set; else an eighth of
     * a ring when it uses shared memory (chunks then stream through a ring while the next are written and
     * reduced: a 64 MiB broadcast took 12 ms against 20 with 16 MiB chunks, an allReduce 22 against 27 with
     * 1 MiB ones, in one JVM), else 16 MiB.
     */
    long preferredChunkBytes() {
        if (chunkBytes > 0) {
            return chunkBytes;
        }
        return sharedMemory != null ? sharedMemory.ringBytes() / 8 : DEFAULT_CHUNK_BYTES;
    }

    /**
     * The chunk size pipelined algorithms cut large buffers into: the same on every member (the receiver of a
     * chunk expects its size), so the smallest preference of the group, agreed while the mesh is built.
     */
    long chunkBytes() {
        return agreedChunkBytes > 0 ? agreedChunkBytes : preferredChunkBytes();
    }

    /** Sets the group's chunk size (the mesh agreed on it); called once, before the backend is handed out. */
    void agreeChunkBytes(long bytes) {
        agreedChunkBytes = bytes;
    }

    Router router() {
        return router;
    }

    VertxInternal vertx() {
        return vertx;
    }

    /**
     * True on the group's event loop, the one thread that touches the matching state (active collectives,
     * router, departures), as Netty's {@code inEventLoop()}; its entry points assert it.
     */
    boolean onContext() {
        return context.nettyEventLoop().inEventLoop();
    }

    private String notOnContext() {
        return "group '" + options.groupName() + "' state touched on " + Thread.currentThread().getName()
                + ", not on its event loop";
    }

    ContextInternal context() {
        return context;
    }

    /** How this group uses shared memory with peers on its host, or null when it does not. */
    SharedMemoryOptions sharedMemory() {
        return sharedMemory;
    }

    /**
     * A channel to {@code peer} could not be set up and the pair stays on TCP: said once per group, since one
     * cause (a full {@code /dev/shm}) usually hits every pair.
     */
    void sharedMemoryFallback(int peer, String why) {
        if (!fallbackLogged) {
            fallbackLogged = true;
            System.getLogger(TcpBackend.class.getName()).log(System.Logger.Level.WARNING, "group '"
                    + options.groupName() + "' on " + who(rank()) + " uses TCP instead of shared memory with "
                    + who(peer) + " (and any other peer that fails the same way): " + why);
        }
    }

    /** True while a collective runs or a receive waits: the shared-memory links poll longer then. */
    boolean awaitsData() {
        return !active.isEmpty() || router.waiting();
    }

    /** An operation began: links to peers on shared memory poll for its data. */
    void expectData() {
        for (PeerConnection c : peers) {
            if (c != null) {
                c.expectData();
            }
        }
    }

    PeerConnection connection(int peer) {
        return peers[peer];
    }

    void attach(PeerConnection connection) {
        assert onContext() : notOnContext();
        peers[connection.peer()] = connection;
    }

    /** "rank 2" or, in a subgroup, "rank 2 (global 5)". */
    String who(int groupRank) {
        int global = options.globalRanks()[groupRank];
        return global == groupRank ? "rank " + groupRank : "rank " + groupRank + " (global " + global + ")";
    }

    // ---- point-to-point (PointToPoint) ----------------------------------------------------------------

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        return pointToPoint.send(buffer, dst, tag);
    }

    @Override
    public int tryRecvOnCallerThread(DeviceBuffer buffer, int src, int tag, long patienceNanos) {
        return pointToPoint.tryRecvOnCallerThread(buffer, src, tag, patienceNanos);
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        return pointToPoint.recv(buffer, src, tag);
    }

    // ---- collectives ----------------------------------------------------------------------------------

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        Call call = new Call(Opcode.BROADCAST, buffer.dtype(), null, root, buffer.numel(), buffer.shape());
        if (sharedCollectives != null && buffer.isHost()) {
            return onSharedArea(call, (c, op, after) -> c.broadcast(op, buffer.segment(), root, after));
        }
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> small ? BinomialTree.broadcast(op, Region.of(buffer), root)
                : Chain.broadcast(op, Region.of(buffer), root));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp reduceOp) {
        Call call = new Call(Opcode.ALL_REDUCE, buffer.dtype(), reduceOp, -1, buffer.numel(), buffer.shape());
        if (sharedCollectives != null && buffer.isHost()) {
            return onSharedArea(call, (c, op, after) -> c.allReduce(op, buffer.segment(), reduceOp, buffer.dtype(),
                    after));
        }
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        Function<CollectiveOp, Future<Void>> algorithm = op -> (small
                ? RecursiveDoubling.allReduce(op, Region.of(buffer), reduceOp, buffer.dtype())
                : RingAllReduce.run(op, Region.of(buffer), reduceOp, buffer.dtype()))
                .compose(v -> average(op, buffer, reduceOp));
        CollectiveOp op = newOp(call);
        int first = RecursiveDoubling.firstPeer(rank(), size());
        if (small && buffer.isHost() && first >= 0 && buffer.byteSize() < Router.PARK_BYTES && !failure.isBroken()
                && !closed) {
            // A small allReduce's first message is the unchanged buffer: it leaves now, on this thread, and a
            // peer that started first can answer before this rank's event loop has even woken up.
            op.sendFirstNow(first, RecursiveDoubling.firstTag(rank(), size()), Region.of(buffer));
        }
        return collective(op, algorithm);
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp reduceOp) {
        Call call = new Call(Opcode.REDUCE, buffer.dtype(), reduceOp, root, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> (small
                ? BinomialTree.reduce(op, Region.of(buffer), root, reduceOp, buffer.dtype())
                : Chain.reduce(op, Region.of(buffer), root, reduceOp, buffer.dtype()))
                .compose(v -> rank() == root ? average(op, buffer, reduceOp) : Future.succeededFuture()));
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        Call call = new Call(Opcode.ALL_GATHER, input.dtype(), null, -1, input.numel(), input.shape());
        return collective(call, op -> RingAllGather.run(op, Region.of(outputs), Region.of(input)));
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        Call call = new Call(Opcode.GATHER, input.dtype(), null, root, input.numel(), input.shape());
        return collective(call, op -> DirectExchange.gather(op, Region.of(outputs), Region.of(input), root));
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        Call call = new Call(Opcode.SCATTER, output.dtype(), null, root, output.numel(), output.shape());
        return collective(call, op -> DirectExchange.scatter(op, Region.of(output), Region.of(inputs), root));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp reduceOp) {
        Call call = new Call(Opcode.REDUCE_SCATTER, output.dtype(), reduceOp, -1, output.numel(), output.shape());
        return collective(call, op -> RingReduceScatter.run(op, Region.of(output), Region.of(inputs), reduceOp,
                output.dtype()).compose(v -> average(op, output, reduceOp)));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        DType dtype = inputs.isEmpty() ? DType.FLOAT32 : inputs.getFirst().dtype();
        Call call = new Call(Opcode.ALL_TO_ALL, dtype, null, -1, -1, null);
        return collective(call, op -> DirectExchange.allToAll(op, Region.of(outputs), Region.of(inputs)));
    }

    @Override
    public Future<Void> barrier() {
        Call call = new Call(Opcode.BARRIER, DType.BOOL, null, -1, 0, new long[0]);
        if (sharedCollectives != null) {
            return onSharedArea(call, SharedMemoryCollectives::barrier);
        }
        return collective(call, DisseminationBarrier::run);
    }

    /** How a collective runs on the shared area, after the collective called before it. */
    private interface SharedRun {
        Future<Void> start(SharedMemoryCollectives collectives, CollectiveOp op, Future<?> after);
    }

    /**
     * Runs {@code call} on the group's collective thread through the shared area, in call order with every other
     * collective. A peer that calls another collective under this number announces it before its first frame
     * leaves: the collective thread finds the mismatch in the area while it waits.
     */
    private Future<Void> onSharedArea(Call call, SharedRun run) {
        CollectiveOp op = newOp(call);
        sharedCollectives.announce(op, true);
        sharedOps.put(op.sequence, op);
        Future<Void> done = run.start(sharedCollectives, op, lastCollective)
                .andThen(ar -> sharedOps.remove(op.sequence));
        lastShared = done;
        lastCollective = done;
        return done;
    }

    private Future<Void> average(CollectiveOp op, DeviceBuffer buffer, ReduceOp reduceOp) {
        return reduceOp == ReduceOp.AVG ? op.divide(Region.of(buffer), buffer.dtype(), size())
                : Future.succeededFuture();
    }

    // ---- device memory ---------------------------------------------------------------------------------

    /** The bytes of {@code region} in host memory: itself, or a staging copy of its device range. */
    Future<MemorySegment> hostBytes(Region region) {
        if (region.isHost()) {
            return Future.succeededFuture(region.segment());
        }
        MemorySegment staging = this.staging.take(region.byteSize());
        return onLoop(region.runtime().copy(region.buffer(), region.offset(), Region.asBuffer(staging, region.dtype()),
                0, region.byteSize())).map(staging);
    }

    /** Gives back what {@link #hostBytes} staged for {@code region} once its bytes are no longer needed. */
    void doneWith(Region region, MemorySegment bytes) {
        if (!region.isHost()) {
            staging.give(bytes);
        }
    }

    /** The host memory device regions are staged in. */
    StagingPool staging() {
        return staging;
    }

    /** Copies host {@code bytes} into device region {@code dst}. */
    Future<Void> upload(MemorySegment bytes, Region dst) {
        return onLoop(dst.runtime().copy(Region.asBuffer(bytes, dst.dtype()), 0, dst.buffer(), dst.offset(),
                dst.byteSize()));
    }

    /**
     * {@code f}, with its listeners run on the group's event loop: device runtimes complete their futures on
     * threads of their own, and the matching state may only be touched here.
     */
    <T> Future<T> onLoop(CompletionStage<T> f) {
        return Future.fromCompletionStage(f, context);
    }

    private Future<Void> collective(Call call, Function<CollectiveOp, Future<Void>> algorithm) {
        return collective(newOp(call), algorithm);
    }

    /** The next collective, numbered in call order. */
    private CollectiveOp newOp(Call call) {
        return new CollectiveOp(this, calls.getAndIncrement(), call);
    }

    private Future<Void> collective(CollectiveOp op, Function<CollectiveOp, Future<Void>> algorithm) {
        if (sharedCollectives != null) {
            sharedCollectives.announce(op, false);
        }
        Future<Void> shared = lastShared;
        if (shared.isComplete()) {
            context.runOnContext(v -> start(op, algorithm));
        } else {
            shared.onComplete(ar -> context.runOnContext(v -> start(op, algorithm)));
        }
        lastCollective = op.promise.future();
        return op.promise.future();
    }

    private void start(CollectiveOp op, Function<CollectiveOp, Future<Void>> algorithm) {
        assert onContext() : notOnContext();
        if (failure.failIfBroken(op.promise, describe(op), op.sequence)) {
            return;
        }
        active.put(op.sequence, op);
        if (failure.failIfDeparted(op)) {
            return;
        }
        for (Router.Early e : router.earlyFor(op.sequence)) {
            if (!op.call.matches(e.frame)) {
                failure.mismatch(op.sequence, op.call, e.peer, e.frame);
                return;
            }
        }
        op.timer = vertx.setTimer(options.timeout().toMillis(), id -> stallReports.timedOut(op));
        Future<Void> done;
        try {
            // A group of one runs the algorithm as well: it exchanges nothing but copies inputs to outputs.
            done = algorithm.apply(op);
        } catch (RuntimeException e) {
            done = Future.failedFuture(e);
        }
        if (!done.isComplete()) {
            // After the algorithm posted its receives: frames already in a ring go straight to them.
            expectData();
        }
        done.onComplete(ar -> {
            op.releaseScratch(ar.succeeded());
            if (ar.succeeded()) {
                finish(op);
                op.promise.tryComplete();
            } else {
                failure.breakGroup(asCommunicationFailure(op, ar.cause()));
            }
        });
    }

    /** Ends collective {@code op}: no longer active, remembered among the recent ones, its timer cancelled. */
    void finish(CollectiveOp op) {
        assert onContext() : notOnContext();
        active.remove(op.sequence);
        int slot = (int) (op.sequence % RECENT);
        recent[slot] = op.call;
        recentSequence[slot] = op.sequence;
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
        assert onContext() : notOnContext();
        if (!frame.isPointToPoint()) {
            CollectiveOp op = active.get(frame.sequence());
            op = op != null ? op : sharedOps.get(frame.sequence());
            Call call = op != null ? op.call : finishedCall(frame.sequence());
            if (call != null && !call.matches(frame)) {
                // Also for a collective this rank finished already: one that only sends (a broadcast root)
                // completes before its peers' frames can show that they called something else.
                failure.mismatch(frame.sequence(), call, conn.peer(), frame);
                return Sink.discard(frame.payloadBytes());
            }
        }
        return router.arrived(conn, frame);
    }

    /** The call of finished collective {@code sequence}, when it is recent enough to be remembered, or null. */
    private Call finishedCall(long sequence) {
        int slot = (int) (sequence % RECENT);
        return sequence >= 0 && recentSequence[slot] == sequence ? recent[slot] : null;
    }

    /** The call of collective {@code sequence} while it runs or when recently finished, or null. */
    Call callOf(long sequence) {
        CollectiveOp op = active.get(sequence);
        op = op != null ? op : sharedOps.get(sequence);
        return op != null ? op.call : finishedCall(sequence);
    }

    /** True while collective {@code sequence} runs. */
    boolean isActive(long sequence) {
        return active.containsKey(sequence);
    }

    /** The running collectives, a copy. */
    List<CollectiveOp> activeOps() {
        assert onContext() : notOnContext();
        return new ArrayList<>(active.values());
    }

    /**
     * The collectives called on the shared area and not yet finished, a copy. Their futures are their collective
     * thread's to complete: it alone knows when it stopped touching their buffers.
     */
    List<CollectiveOp> sharedOps() {
        return new ArrayList<>(sharedOps.values());
    }

    /** The lowest sequence number among {@code ops}, or the next one to be called when there are none. */
    private long firstSequence(Map<Long, CollectiveOp> ops) {
        return ops.keySet().stream().mapToLong(Long::longValue).min().orElse(calls.get());
    }

    /** The number of a running collective, or -1 when none runs. */
    long firstActiveSequence() {
        return active.isEmpty() ? -1 : active.keySet().iterator().next();
    }

    /** How many collectives this rank has called. */
    long called() {
        return calls.get() - 1;
    }

    // ---- failures (GroupFailure) and stall reports (StallReports), as the connections report them --------

    GroupFailure failure() {
        return failure;
    }

    boolean isClosed() {
        return closed;
    }

    /** See {@link GroupFailure#abortArrived}. */
    void abortArrived(int peer, long reason, String message) {
        assert onContext() : notOnContext();
        failure.abortArrived(peer, reason, message);
    }

    /** See {@link GroupFailure#breakGroup}. */
    void breakGroup(CommunicationException cause) {
        assert onContext() : notOnContext();
        failure.breakGroup(cause);
    }

    /**
     * A collective that ran off the event loop failed with {@code cause}: the group is marked broken at once, on
     * the calling thread, so that no operation called after this returns can still start; then, on the event loop,
     * it breaks as when a collective there fails, and the peers hear of a mismatch (of anything else when this rank
     * closes the group). Any thread.
     */
    void breakGroupFrom(CommunicationException cause) {
        failure.markBroken(cause);
        context.runOnContext(v -> breakGroupOnLoop(cause));
    }

    private void breakGroupOnLoop(CommunicationException cause) {
        if (closed || failure.cause() != cause) {
            return; // broken by another cause first, which the loop has handled or will
        }
        if (cause instanceof CollectiveMismatchException mismatch) {
            failure.mismatchFound(mismatch);
        } else {
            failure.breakGroup(cause);
        }
    }

    /** See {@link GroupFailure#peerLost}. */
    void peerLost(int peer, String why, Throwable cause) {
        assert onContext() : notOnContext();
        failure.peerLost(peer, why, cause);
    }

    /** See {@link GroupFailure#peerDeparting}. */
    void peerDeparting(int peer, long collectives) {
        assert onContext() : notOnContext();
        failure.peerDeparting(peer, collectives);
    }

    /** See {@link GroupFailure#writeFailed}. */
    CommunicationException writeFailed(int peer, CollectiveOp op, Throwable cause) {
        return failure.writeFailed(peer, op, cause);
    }

    /** See {@link GroupFailure#mismatchMessage}. */
    String mismatchMessage(long sequence, Call call, int peer, Frame frame) {
        return failure.mismatchMessage(sequence, call, peer, frame);
    }

    /** See {@link StallReports#statusReply}. */
    Frame statusReply(Frame request) {
        assert onContext() : notOnContext();
        return stallReports.statusReply(request);
    }

    /** See {@link StallReports#statusArrived}. */
    void statusArrived(int peer, Frame reply) {
        assert onContext() : notOnContext();
        stallReports.statusArrived(peer, reply);
    }

    // ---- counters ---------------------------------------------------------------------------------------

    /** How often and how long frames to this rank's peers found their shared-memory rings full. */
    @Override
    public List<BackendCounter> counters() {
        return List.of(
                new BackendCounter("shm.ring.full", null, "writes that found a shared-memory ring to a peer full",
                        () -> sumOverLinks(SharedMemoryLink::ringFullCount)),
                new BackendCounter("shm.ring.full.time", "seconds", "time frames waited for room in the shared-memory"
                        + " rings", () -> sumOverLinks(SharedMemoryLink::ringFullNanos) / 1e9));
    }

    private double sumOverLinks(ToLongFunction<SharedMemoryLink> f) {
        long total = 0;
        for (PeerConnection c : peers) {
            SharedMemoryLink link = c == null ? null : c.sharedMemoryLink();
            if (link != null) {
                total += f.applyAsLong(link);
            }
        }
        return total;
    }

    // ---- lifecycle --------------------------------------------------------------------------------------

    @Override
    public Future<Void> close() {
        Promise<Void> done = context.promise();
        context.runOnContext(v -> {
            if (!closed) {
                CommunicationException cause = failure.cause();
                closed = true;
                if (cause != null) {
                    // Peers still waiting on this rank learn the cause, not only that it left.
                    failure.abortPeers(cause.sequence(), cause.getMessage(), Frame.ABORT_FAILED);
                }
                // Peers may rely on the collectives this rank finished, not on those cut short here.
                long finished = Math.min(firstSequence(active), firstSequence(sharedOps)) - 1;
                failure.breakGroup(new CommunicationException(options.groupName(), -1, "the group '"
                        + options.groupName() + "' was closed on " + who(rank()), null));
                List<Future<Void>> goodbyes = new ArrayList<>();
                for (PeerConnection c : peers) {
                    if (c != null) {
                        goodbyes.add(c.leave(finished));
                    }
                }
                Future.join(goodbyes).onComplete(ar -> {
                    if (sharedCollectives != null) {
                        sharedCollectives.close();
                    }
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
