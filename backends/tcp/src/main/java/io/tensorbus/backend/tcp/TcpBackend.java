package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
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
    /** The chunk size of pipelined algorithms over TCP, in bytes. */
    static final long DEFAULT_CHUNK_BYTES = 16 << 20;
    /** How long a stall report waits for the peers' answers, at most, in milliseconds. */
    static final long STATUS_WAIT_MILLIS = 500;
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
    private final Map<Long, StallReport> reports = new HashMap<>();
    /** The chunk size set by {@code tcp.chunkBytes}, or -1 for the default of the group's links. */
    private final long chunkBytes;
    /** The chunk size every member uses, agreed while the mesh is built (the smallest member's preference). */
    private long agreedChunkBytes = -1;
    private final int groupHash;
    private final Runnable onClose;
    /** Per peer: the number of collectives it called before it left in order, or -1 while it is here. */
    private final long[] departed;
    /** Per peer: true once it left in order and its connection closed. */
    private final boolean[] gone;
    /** Per peer: completes once the last point-to-point message to it was handed to its connection. */
    private final Future<?>[] lastSend;
    /**
     * Per peer: sends on their way through the event loop, which a send written on the caller's thread must not pass.
     */
    private final AtomicInteger[] queuedSends;
    /**
     * The largest message a blocking receive polls for on its own thread: beyond it the copy, not the two
     * hand-offs, is the cost, and a longer wait on a spinning thread was seen to keep the sender from the core
     * it needed (1 MiB round trips of 3-5 ms instead of 0.3).
     */
    static final long CALLER_RECV_MAX_BYTES = Router.PARK_BYTES;
    /** Receives handed to the event loop and not yet registered with the router: none may be overtaken. */
    private final AtomicInteger receivesPosting = new AtomicInteger();
    /** The calls of the last {@link #RECENT} finished collectives, to check frames that arrive after them. */
    private final Call[] recent = new Call[RECENT];
    private final long[] recentSequence = new long[RECENT];
    private volatile CommunicationException broken;
    private volatile boolean closed;
    private final SharedMemoryOptions sharedMemory;
    private boolean fallbackLogged;

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
        this.departed = new long[options.worldSize()];
        Arrays.fill(departed, -1);
        this.gone = new boolean[options.worldSize()];
        this.lastSend = new Future<?>[options.worldSize()];
        this.queuedSends = new AtomicInteger[options.worldSize()];
        Arrays.setAll(queuedSends, i -> new AtomicInteger());
        Arrays.fill(lastSend, Future.succeededFuture());
        Arrays.fill(recentSequence, -1);
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
    private void expectData() {
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

    // ---- point-to-point -------------------------------------------------------------------------------

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        Frame header = new Frame(Frame.DATA, Opcode.SEND.code, buffer.dtype().ordinal(), Frame.NO_REDUCE, -1, -1,
                tag, buffer.numel(), 0, groupHash, buffer.byteSize(), 0);
        if (buffer.isHost() && dst >= 0 && dst < peers.length && broken == null && !closed
                && queuedSends[dst].get() == 0 && peers[dst] != null
                && peers[dst].tryWriteNow(header, buffer.segment())) {
            // Written into shared memory on this thread: no hand-off to the event loop and back.
            return Future.succeededFuture();
        }
        // While a send waits for the event loop, later ones to the same rank queue behind it (same-tag order).
        queuedSends[dst].incrementAndGet();
        Promise<Void> promise = context.promise();
        promise.future().onComplete(ar -> queuedSends[dst].decrementAndGet());
        context.runOnContext(v -> {
            if (failIfBroken(promise, inGroup("send to " + who(dst)))) {
                return;
            }
            long timer = vertx.setTimer(options.timeout().toMillis(),
                    id -> promise.tryFail(p2pTimeout("send to", dst, tag)));
            Region region = Region.of(buffer);
            Future<MemorySegment> bytes = hostBytes(region);
            writeInOrder(dst, header, bytes).onComplete(ar -> {
                if (bytes.succeeded()) {
                    doneWith(region, bytes.result());
                }
                vertx.cancelTimer(timer);
                if (ar.succeeded()) {
                    promise.tryComplete();
                } else {
                    promise.tryFail(broken != null ? broken
                            : lost(dst, -1, inGroup("send to " + who(dst)), ar.cause()));
                }
            });
        });
        return promise.future();
    }

    @Override
    public int tryRecvOnCallerThread(DeviceBuffer buffer, int src, int tag, long patienceNanos) {
        if (!buffer.isHost() || buffer.byteSize() > CALLER_RECV_MAX_BYTES || src < 0 || src >= peers.length
                || patienceNanos <= 0) {
            return -1;
        }
        PeerConnection peer = peers[src];
        // Only while nothing could come first: no receive posted or on its way, no early message held.
        BooleanSupplier quiet = () -> broken == null && !closed && receivesPosting.get() == 0
                && router.p2pQuiet();
        return peer != null && peer.tryReceiveNow(buffer, tag, patienceNanos, quiet) ? src : -1;
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        Promise<Integer> promise = context.promise();
        receivesPosting.incrementAndGet();
        context.runOnContext(v -> {
            try {
                post(promise, buffer, src, tag);
            } finally {
                receivesPosting.decrementAndGet();
            }
        });
        return promise.future();
    }

    /** Registers a receive with the router, on the event loop, with its timeout. */
    private void post(Promise<Integer> promise, DeviceBuffer buffer, int src, int tag) {
        if (failIfBroken(promise, inGroup("recv from " + (src < 0 ? "any rank" : who(src))))) {
            return;
        }
        MemorySegment landing = buffer.isHost() ? buffer.segment() : staging.take(buffer.byteSize());
        Router.Pending p = router.expectP2p(src, tag, Sink.copyInto(landing), buffer.dtype());
        expectData();
        if (src >= 0 && gone[src] && router.unmatched(p)) {
            // Nothing more can come from a rank that left (what it sent before is matched above).
            router.withdraw(p);
            promise.tryFail(lost(src, -1, inGroup("recv from " + who(src) + " (tag " + tag + ")"), null,
                    leftMessage(src)));
            return;
        }
        long timer = vertx.setTimer(options.timeout().toMillis(), id -> {
            router.withdraw(p);
            p.promise.tryFail(p2pTimeout("recv from", src, tag));
        });
        p.promise.future().onComplete(ar -> {
            vertx.cancelTimer(timer);
            if (ar.failed() || buffer.isHost()) {
                promise.handle(ar);
            } else {
                upload(landing, Region.of(buffer)).onComplete(up -> {
                    staging.give(landing);
                    promise.handle(up.map(ar.result()));
                });
            }
        });
    }

    /**
     * Writes {@code bytes} to {@code dst}, but not before the previous message to {@code dst} was handed to its
     * connection: the bytes of a device buffer arrive from the device at their own pace, and messages with the
     * same tag must still leave in the order they were sent.
     */
    private Future<Void> writeInOrder(int dst, Frame header, Future<MemorySegment> bytes) {
        Promise<Void> handedOver = Promise.promise();
        Future<?> previous = lastSend[dst];
        lastSend[dst] = handedOver.future();
        return previous.transform(ignored -> bytes).compose(b -> {
            Future<Void> written = peers[dst].write(header, b);
            handedOver.tryComplete();
            return written;
        }).onFailure(e -> handedOver.tryComplete());
    }

    private CommunicationTimeoutException p2pTimeout(String what, int peer, int tag) {
        String whom = peer < 0 ? "any rank" : who(peer);
        return new CommunicationTimeoutException(options.groupName(), -1, what + " " + whom + " (tag " + tag
                + ") in group '" + options.groupName() + "' timed out after " + options.timeout() + " on "
                + who(rank()), peer < 0 ? new int[0] : new int[] {peer});
    }

    private boolean failIfBroken(Promise<?> promise, String what) {
        return failIfBroken(promise, what, -1);
    }

    /**
     * Fails {@code promise} (of operation {@code what}, which names the group, collective {@code sequence} or -1)
     * if the group is unusable.
     */
    private boolean failIfBroken(Promise<?> promise, String what, long sequence) {
        CommunicationException b = broken;
        if (b == null && !closed) {
            return false;
        }
        if (b == null) {
            promise.tryFail(new CommunicationException(options.groupName(), sequence, what
                    + " cannot run: the group was closed on " + who(rank()), null));
        } else {
            promise.tryFail(derived(b, sequence, what + " cannot run on "
                    + who(rank()) + ": " + b.getMessage()));
        }
        return true;
    }

    /**
     * The failure of another operation caused by {@code cause}: the same kind of exception (a lost peer stays
     * a {@link PeerLostException} naming that peer, a timeout keeps its missing ranks), with its own sequence
     * number and message, so that callers can react to the kind whichever operation they were waiting on.
     */
    private CommunicationException derived(CommunicationException cause, long sequence, String message) {
        String group = options.groupName();
        if (cause instanceof PeerLostException p) {
            return new PeerLostException(group, sequence, p.peer(), message, cause);
        }
        if (cause instanceof CommunicationTimeoutException t) {
            return new CommunicationTimeoutException(group, sequence, message, t.missingRanks());
        }
        if (cause instanceof CollectiveMismatchException) {
            return new CollectiveMismatchException(group, sequence, message);
        }
        return new CommunicationException(group, sequence, message, cause);
    }

    // ---- collectives ----------------------------------------------------------------------------------

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        Call call = new Call(Opcode.BROADCAST, buffer.dtype(), null, root, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        return collective(call, op -> small ? BinomialTree.broadcast(op, Region.of(buffer), root)
                : Chain.broadcast(op, Region.of(buffer), root));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp reduceOp) {
        Call call = new Call(Opcode.ALL_REDUCE, buffer.dtype(), reduceOp, -1, buffer.numel(), buffer.shape());
        boolean small = buffer.byteSize() <= SMALL_BYTES;
        Function<CollectiveOp, Future<Void>> algorithm = op -> (small
                ? RecursiveDoubling.allReduce(op, Region.of(buffer), reduceOp, buffer.dtype())
                : RingAllReduce.run(op, Region.of(buffer), reduceOp, buffer.dtype()))
                .compose(v -> average(op, buffer, reduceOp));
        CollectiveOp op = newOp(call);
        int first = RecursiveDoubling.firstPeer(rank(), size());
        if (small && buffer.isHost() && first >= 0 && buffer.byteSize() < Router.PARK_BYTES && broken == null
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
        return collective(call, DisseminationBarrier::run);
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
        context.runOnContext(v -> start(op, algorithm));
        return op.promise.future();
    }

    private void start(CollectiveOp op, Function<CollectiveOp, Future<Void>> algorithm) {
        assert onContext() : notOnContext();
        if (failIfBroken(op.promise, describe(op), op.sequence)) {
            return;
        }
        active.put(op.sequence, op);
        if (failIfDeparted(op)) {
            return;
        }
        for (Router.Early e : router.earlyFor(op.sequence)) {
            if (!op.call.matches(e.frame)) {
                mismatch(op.sequence, op.call, e.peer, e.frame);
                return;
            }
        }
        op.timer = vertx.setTimer(options.timeout().toMillis(), id -> timedOut(op));
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
                breakGroup(asCommunicationFailure(op, ar.cause()));
            }
        });
    }

    private void finish(CollectiveOp op) {
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
            Call call = op != null ? op.call : finishedCall(frame.sequence());
            if (call != null && !call.matches(frame)) {
                // Also for a collective this rank finished already: one that only sends (a broadcast root)
                // completes before its peers' frames can show that they called something else.
                mismatch(frame.sequence(), call, conn.peer(), frame);
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

    private void mismatch(long sequence, Call call, int peer, Frame frame) {
        mismatchFound(new CollectiveMismatchException(options.groupName(), sequence,
                mismatchMessage(sequence, call, peer, frame)));
    }

    /**
     * The message of a mismatch at collective {@code sequence}: this rank's call and what {@code peer}'s frame says.
     */
    String mismatchMessage(long sequence, Call call, int peer, Frame frame) {
        String shape = call.numel() == frame.opNumel() && call.shapeHash() != frame.shapeHash()
                ? " (the same number of elements in another shape)" : "";
        return "collective mismatch in group '" + options.groupName() + "' at collective #" + sequence + ": "
                + who(rank()) + " called " + call.describe() + " but " + who(peer) + " called "
                + Call.describe(frame) + shape + " (every rank must call the same collectives in the same order)";
    }

    /**
     * Breaks the group with {@code e} and tells the peers, which may be waiting for frames this rank will never send.
     */
    private void mismatchFound(CollectiveMismatchException e) {
        abortPeers(e.sequence(), e.getMessage(), Frame.ABORT_MISMATCH);
        breakGroup(e);
    }

    /** Sends every peer an ABORT saying why ({@code reason}: {@link Frame#ABORT_MISMATCH} or ABORT_FAILED). */
    private void abortPeers(long sequence, String message, long reason) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        MemorySegment payload = MemorySegment.ofArray(
                Arrays.copyOf(text, Math.min(text.length, Frame.MAX_ABORT_BYTES)));
        Frame abort = new Frame(Frame.ABORT, 0, 0, Frame.NO_REDUCE, -1, -1, sequence, 0, 0, groupHash,
                payload.byteSize(), reason);
        for (PeerConnection c : peers) {
            if (c != null) {
                c.write(abort, payload);
            }
        }
    }

    /**
     * A peer gave up on the group and said why: a mismatch it found, or its own failure (then it leaves, and
     * the error names the peer it lost rather than only the one that left).
     */
    void abortArrived(int peer, long reason, String message) {
        assert onContext() : notOnContext();
        if (broken == null && !closed) {
            long seq = active.isEmpty() ? -1 : active.keySet().iterator().next();
            breakGroup(reason == Frame.ABORT_FAILED
                    ? lost(peer, seq, null, null, "it left after its group failed: " + message)
                    : new CollectiveMismatchException(options.groupName(), seq, who(peer) + " aborted group '"
                    + options.groupName() + "': " + message));
        }
    }

    /** Fails every pending operation with {@code cause} (each collective's own message names it). */
    void breakGroup(CommunicationException cause) {
        assert onContext() : notOnContext();
        if (broken == null) {
            broken = cause;
        }
        for (CollectiveOp op : new ArrayList<>(active.values())) {
            finish(op);
            op.promise.tryFail(op.sequence == cause.sequence() ? cause : derived(cause, op.sequence,
                    describe(op) + " failed on " + who(rank()) + ": " + cause.getMessage()));
        }
        router.failAll(cause);
    }

    /** The connection to {@code peer} is gone or carried garbage. */
    void peerLost(int peer, String why, Throwable cause) {
        assert onContext() : notOnContext();
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
        assert onContext() : notOnContext();
        departed[peer] = collectives;
    }

    /**
     * A peer left in order: operations it finished are unaffected (its data has arrived), but collectives
     * it never called and receives that wait for it alone can never finish.
     */
    private void peerLeft(int peer) {
        gone[peer] = true;
        router.failFrom(peer, lost(peer, -1, inGroup("recv from " + who(peer)), null, leftMessage(peer)));
        for (CollectiveOp op : new ArrayList<>(active.values())) {
            failIfDeparted(op);
        }
    }

    private String leftMessage(int peer) {
        return "it left the group after its " + departed[peer] + " collectives";
    }

    private boolean failIfDeparted(CollectiveOp op) {
        for (int p = 0; p < departed.length; p++) {
            if (departed[p] >= 0 && departed[p] < op.sequence) {
                breakGroup(lost(p, op.sequence, describe(op), null, leftMessage(p)));
                return true;
            }
        }
        return false;
    }

    /** A frame of collective {@code op} could not be written to {@code peer}: the peer is lost to it. */
    CommunicationException writeFailed(int peer, CollectiveOp op, Throwable cause) {
        CommunicationException b = broken;
        return b != null ? b : lost(peer, op.sequence, describe(op), cause, "writing to it failed: "
                + cause.getMessage());
    }

    private PeerLostException lost(int peer, long sequence, String what, Throwable cause) {
        return lost(peer, sequence, what, cause, String.valueOf(cause.getMessage()));
    }

    /** {@code peer} is lost to operation {@code what} (which names the group), or to the group when null. */
    private PeerLostException lost(int peer, long sequence, String what, Throwable cause, String why) {
        String lost = what == null ? "lost " + who(peer) + " of group '" + options.groupName() + "'"
                : what + ": lost " + who(peer);
        return new PeerLostException(options.groupName(), sequence, peer, lost + " on " + who(rank()) + ": " + why,
                cause);
    }

    /** "{@code what} in group 'NAME'". */
    private String inGroup(String what) {
        return what + " in group '" + options.groupName() + "'";
    }

    // ---- stall reports ---------------------------------------------------------------------------------

    private void timedOut(CollectiveOp op) {
        assert onContext() : notOnContext();
        op.timer = -1;
        StallReport report = new StallReport(this, op);
        reports.put(op.sequence, report);
        Frame request = new Frame(Frame.STATUS_REQUEST, 0, 0, Frame.NO_REDUCE, -1, -1, op.sequence, 0, 0, groupHash, 0,
                0);
        for (PeerConnection c : peers) {
            if (c != null) {
                c.write(request, null);
            }
        }
        vertx.setTimer(Math.min(STATUS_WAIT_MILLIS, Math.max(1, options.timeout().toMillis() / 4)), id -> {
            reports.remove(op.sequence);
            if (!active.containsKey(op.sequence)) {
                return; // it finished (or the group broke) while the peers were asked
            }
            CommunicationException e = report.exception(options);
            if (e instanceof CollectiveMismatchException m) {
                mismatchFound(m);
            } else {
                breakGroup(e);
            }
        });
    }

    /**
     * The answer to a peer's stall question about collective {@code request.tag()}: how many collectives this
     * rank has called and, when it is in that collective (or finished it recently), that call's fingerprint,
     * so that a mismatch where no frame crossed (two ranks that both only receive) is told apart from a stall.
     */
    Frame statusReply(Frame request) {
        assert onContext() : notOnContext();
        long sequence = request.tag();
        CollectiveOp op = active.get(sequence);
        Call call = op != null ? op.call : finishedCall(sequence);
        if (call == null) {
            return new Frame(Frame.STATUS_REPLY, 0, 0, Frame.NO_REDUCE, -1, -1, sequence, 0, 0, groupHash, 0,
                    called());
        }
        return new Frame(Frame.STATUS_REPLY, call.opcode().code, call.dtype().ordinal(), call.reduceOpCode(),
                call.root(), -1, sequence, call.numel(), call.shapeHash(), groupHash, 0, called());
    }

    /** How many collectives this rank has called. */
    private long called() {
        return calls.get() - 1;
    }

    void statusArrived(int peer, Frame reply) {
        assert onContext() : notOnContext();
        StallReport r = reports.get(reply.tag());
        if (r != null) {
            r.answer(peer, reply);
        }
    }

    // ---- lifecycle --------------------------------------------------------------------------------------

    @Override
    public Future<Void> close() {
        Promise<Void> done = context.promise();
        context.runOnContext(v -> {
            if (!closed) {
                CommunicationException failure = broken;
                closed = true;
                if (failure != null) {
                    // Peers still waiting on this rank learn the cause, not only that it left.
                    abortPeers(failure.sequence(), failure.getMessage(), Frame.ABORT_FAILED);
                }
                // Peers may rely on the collectives this rank finished, not on those cut short here.
                long finished = active.keySet().stream().mapToLong(Long::longValue).min().orElse(calls.get()) - 1;
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
