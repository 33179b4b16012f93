package io.tensorbus.distributed;

import static io.tensorbus.distributed.impl.TensorBuffers.readUntilDone;
import static io.tensorbus.distributed.impl.TensorBuffers.writtenWhenDone;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.HostStagingBackend;
import io.tensorbus.distributed.impl.MonitoredBarrier;
import io.tensorbus.distributed.impl.PyTorchJoin;
import io.tensorbus.distributed.impl.RankBlocks;
import io.tensorbus.distributed.impl.TensorBuffers;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A group of processes that communicate, as c10d's {@code ProcessGroup}: point-to-point messages and
 * collectives over tensors, run by a backend found by name. Ranks in arguments ({@code src}, {@code dst}) are
 * global ranks, as in {@code torch.distributed}'s functions, and must be members of this group; the overloads
 * taking a {@link GroupRank} name a rank of this group instead (PyTorch's {@code group_src}/{@code group_dst}).
 * Ranks answered (a receive's sender) are global ranks. In the default group both numberings agree.
 *
 * <p>Every operation returns at once with a {@link Future} (the tutorial's {@code isend}/{@code irecv} and
 * {@code async_op=True}); the tensors handed to it must not be touched until it completes. Collectives must
 * be called by every member in the same order. Every operation fails after the group's timeout, and a
 * failed collective (a mismatch, a lost peer, a timeout) makes the group unusable, as with NCCL. The
 * blocking {@link #send}/{@link #recv} wait off the event loop only. Mutiny users wrap a group in
 * {@code io.tensorbus.mutiny.UniProcessGroup}.
 *
 * <p>On a rank that is not a member ({@link #isMember()} false), as in PyTorch, an operation does nothing: its
 * future completes at once (with null, or -1 for a sender's rank, which {@link #recv} returns too) and the first
 * one logs a warning; only the operations that make groups from this one fail their future there. Arguments are
 * not checked on such a rank.
 */
public final class ProcessGroup implements AutoCloseable {
    /** {@code src} of {@link #irecv(Tensor, int)}: receive from whichever rank sends first. */
    public static final int ANY_SOURCE = Backend.ANY_SOURCE;
    private static final System.Logger LOG = System.getLogger(ProcessGroup.class.getName());

    private final Backend backend;
    private final String name;
    private final Membership members;
    private final Store store;
    private final Vertx vertx;
    private final Duration timeout;
    private final Map<String, String> properties;
    private final JobSecret secret;
    private final Runnable release;
    private final AtomicInteger subgroups = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final FlightRecorder flightRecorder = new FlightRecorder(this);
    private final GroupMeters meters;
    /** The default group's entry in the exit hook's list; null for subgroups. */
    private volatile ProcessExit.Registration atExit;
    /** The store of the PyTorch job whose default group this is ({@link #joinedPyTorchJob}), else null. */
    private volatile Store pytorchJob;

    ProcessGroup(Backend backend, String name, int[] globalRanks, int globalRank, Store store, Vertx vertx,
                 Duration timeout, Map<String, String> properties, JobSecret secret, Runnable release) {
        this.backend = backend;
        this.name = name;
        this.members = new Membership(name, globalRanks, globalRank);
        this.store = store;
        this.vertx = vertx;
        this.timeout = timeout;
        this.properties = properties;
        this.secret = secret;
        this.release = release;
        this.meters = GroupMeters.of(this, backend);
        if (backend != null && DebugLevel.current().includes(DebugLevel.INFO)) {
            LOG.log(System.Logger.Level.INFO, "process group ''{0}'' on global rank {1}: rank {2} of {3}, members {4},"
                    + " backend {5}, timeout {6}", name, globalRank, backend.rank(), globalRanks.length, members,
                    backend.name(), timeout);
        }
    }

    // ---- identity -----------------------------------------------------------------------------------------

    /** This process's rank in the group, or -1 when it is not a member ({@link #isMember()}). */
    public int rank() {
        return backend == null ? -1 : backend.rank();
    }

    /** The number of members. */
    public int size() {
        return members.size();
    }

    /** The group's name (the default group's is its init option, subgroups' derive from it). */
    public String name() {
        return name;
    }

    /** The backend's name ({@code "tcp"}, ...), or null for a non-member's handle. */
    public String backendName() {
        return backend == null ? null : backend.name();
    }

    /** False for the handle {@link Distributed#newGroup} returns to processes outside the new group. */
    public boolean isMember() {
        return backend != null;
    }

    /** The global rank of each member, in group-rank order (a copy). */
    public int[] ranks() {
        return members.ranks();
    }

    /** The global rank of group rank {@code groupRank}. */
    public int globalRank(int groupRank) {
        members.checkRank(groupRank, "groupRank");
        return members.global(groupRank);
    }

    /** The group rank of global rank {@code global}, or -1 when that process is not a member. */
    public int groupRank(int global) {
        return members.groupRank(global);
    }

    /** This group's flight recorder: the last operations this rank issued on it, for post-mortems. */
    public FlightRecorder flightRecorder() {
        return flightRecorder;
    }

    /** The deadline of every operation. */
    public Duration timeout() {
        return timeout;
    }

    // ---- point-to-point -------------------------------------------------------------------------------------

    /** Sends {@code tensor} to global rank {@code dst} with tag 0; see {@link #isend(Tensor, int, int)}. */
    public Future<Void> isend(Tensor tensor, int dst) {
        return isend(tensor, dst, 0);
    }

    /**
     * Sends {@code tensor} to global rank {@code dst}; completes when its bytes have left this process.
     *
     * @param tag a non-negative tag that the receiver matches
     * @throws IllegalArgumentException for a rank outside the group, this rank itself, or a negative tag
     */
    public Future<Void> isend(Tensor tensor, int dst, int tag) {
        return isend(tensor, group(dst, "dst"), tag);
    }

    /** {@link #isend(Tensor, int, int)} to rank {@code dst} of this group ({@code group_dst}). */
    public Future<Void> isend(Tensor tensor, GroupRank dst, int tag) {
        return GroupPointToPoint.isend(this, tensor, dst, tag);
    }

    /** Receives into {@code tensor} from whichever rank sends first with tag 0; completes with the sender. */
    public Future<Integer> irecv(Tensor tensor) {
        return irecv(tensor, ANY_SOURCE, 0);
    }

    /** Receives into {@code tensor} from global rank {@code src} (or {@link #ANY_SOURCE}) with tag 0. */
    public Future<Integer> irecv(Tensor tensor, int src) {
        return irecv(tensor, src, 0);
    }

    /**
     * Receives a message with {@code tag} from global rank {@code src} (or {@link #ANY_SOURCE}) into
     * {@code tensor}, which must have the sent message's dtype and element count; completes with the sender's
     * global rank.
     */
    public Future<Integer> irecv(Tensor tensor, int src, int tag) {
        return src == ANY_SOURCE ? GroupPointToPoint.irecvFromAny(this, tensor, tag)
                : irecv(tensor, group(src, "src"), tag);
    }

    /** {@link #irecv(Tensor, int, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<Integer> irecv(Tensor tensor, GroupRank src, int tag) {
        return GroupPointToPoint.irecv(this, tensor, src, tag);
    }

    /** The tutorial's blocking {@code send}: {@link #isend(Tensor, int, int)} and wait (never on an event loop). */
    public void send(Tensor tensor, int dst, int tag) {
        Blocking.await(isend(tensor, dst, tag), blockingDeadline(), "send to rank " + dst);
    }

    /** Blocking {@link #isend(Tensor, GroupRank, int)}. */
    public void send(Tensor tensor, GroupRank dst, int tag) {
        Blocking.await(isend(tensor, dst, tag), blockingDeadline(), "send to group rank "
                + (dst == null ? null : dst.rank()));
    }

    /** Blocking send with tag 0. */
    public void send(Tensor tensor, int dst) {
        send(tensor, dst, 0);
    }

    /**
     * The tutorial's blocking {@code recv}: returns the sender's rank (never on an event loop). A message from a
     * named {@code src} that arrives within {@code tensorbus.recvPollMicros} (1000 µs by default) is taken on this
     * thread where the backend can (shared memory), sparing two thread hand-offs.
     */
    public int recv(Tensor tensor, int src, int tag) {
        return src == ANY_SOURCE ? GroupPointToPoint.recvFromAny(this, tensor, tag)
                : recv(tensor, group(src, "src"), tag);
    }

    /** Blocking {@link #irecv(Tensor, GroupRank, int)}; returns the sender's global rank. */
    public int recv(Tensor tensor, GroupRank src, int tag) {
        return GroupPointToPoint.recv(this, tensor, src, tag);
    }

    /** Blocking receive with tag 0 from {@code src} (or {@link #ANY_SOURCE}). */
    public int recv(Tensor tensor, int src) {
        return recv(tensor, src, 0);
    }

    /** Blocking receive with tag 0 from any rank; returns the sender's rank. */
    public int recv(Tensor tensor) {
        return recv(tensor, ANY_SOURCE, 0);
    }

    // ---- collectives ------------------------------------------------------------------------------------------

    /** Copies global rank {@code src}'s {@code tensor} into every member's {@code tensor}. */
    public Future<Void> broadcast(Tensor tensor, int src) {
        return broadcast(tensor, group(src, "src"));
    }

    /** {@link #broadcast(Tensor, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<Void> broadcast(Tensor tensor, GroupRank src) {
        return run("broadcast", b -> {
            members.checkRank(src, "src");
            DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
            return writtenWhenDone(flightRecorder.collective("broadcast", () -> b.broadcast(buf, src.rank()), buf),
                    tensor);
        });
    }

    /** Sums {@code tensor} over the members, in place on every member. */
    public Future<Void> allReduce(Tensor tensor) {
        return allReduce(tensor, ReduceOp.SUM);
    }

    /** Reduces {@code tensor} over the members with {@code op}, in place on every member. */
    public Future<Void> allReduce(Tensor tensor, ReduceOp op) {
        return run("allReduce", b -> {
            DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
            checkOp(op, buf.dtype());
            if (isPremul(op)) {
                tensor.muli(op.factor());
            }
            ReduceOp wire = isPremul(op) ? ReduceOp.SUM : op;
            return writtenWhenDone(flightRecorder.collective("allReduce", () -> b.allReduce(buf, wire), buf),
                    tensor);
        });
    }

    /** Sums {@code tensor} over the members into global rank {@code dst}'s {@code tensor}. */
    public Future<Void> reduce(Tensor tensor, int dst) {
        return reduce(tensor, dst, ReduceOp.SUM);
    }

    /** Reduces {@code tensor} over the members with {@code op} into global rank {@code dst}'s; others keep theirs. */
    public Future<Void> reduce(Tensor tensor, int dst, ReduceOp op) {
        return reduce(tensor, group(dst, "dst"), op);
    }

    /** {@link #reduce(Tensor, int, ReduceOp)} into rank {@code dst} of this group ({@code group_dst}). */
    public Future<Void> reduce(Tensor tensor, GroupRank dst, ReduceOp op) {
        return run("reduce", b -> {
            members.checkRank(dst, "dst");
            DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
            checkOp(op, buf.dtype());
            if (isPremul(op)) {
                // Only the destination's tensor may change: the others reduce a scaled copy.
                Tensor scaled = tensor.mul(op.factor());
                return reduce(scaled, dst, ReduceOp.SUM).map(v -> rank() == dst.rank() ? tensor.copyi(scaled) : null)
                        .mapEmpty();
            }
            return writtenWhenDone(flightRecorder.collective("reduce", () -> b.reduce(buf, dst.rank(), op), buf),
                    tensor);
        });
    }

    /** Fills {@code outputs.get(r)} with rank r's {@code input} on every member ({@code all_gather}). */
    public Future<Void> allGather(List<Tensor> outputs, Tensor input) {
        return run("allGather", b -> {
            DeviceBuffer in = TensorBuffers.of(input, "input");
            List<DeviceBuffer> outs = TensorBuffers.list(outputs, size(), in.dtype(), in.numel(), "outputs");
            Future<Void> work = flightRecorder.collective("allGather", () -> b.allGather(outs, in), in);
            return readUntilDone(writtenWhenDone(work, outputs), input);
        });
    }

    /**
     * {@code all_gather_into_tensor}: rank r's {@code input} lands in the r-th block of {@code output}, which
     * holds {@code size() * input.numel()} elements of the same dtype.
     */
    public Future<Void> allGatherIntoTensor(Tensor output, Tensor input) {
        return run("allGatherIntoTensor", b -> {
            DeviceBuffer in = TensorBuffers.of(input, "input");
            DeviceBuffer out = TensorBuffers.of(output, "output");
            List<DeviceBuffer> blocks = RankBlocks.equal(out, "output", in, "input", size());
            Future<Void> work = flightRecorder.collective("allGatherIntoTensor", () -> b.allGather(blocks, in), in,
                    out);
            return readUntilDone(writtenWhenDone(work, output), input);
        });
    }

    /**
     * Collects every member's {@code input} into {@code outputs}, in group-rank order, on global rank {@code dst}
     * (others pass an empty list).
     */
    public Future<Void> gather(Tensor input, List<Tensor> outputs, int dst) {
        return gather(input, outputs, group(dst, "dst"));
    }

    /** {@link #gather(Tensor, List, int)} on rank {@code dst} of this group ({@code group_dst}). */
    public Future<Void> gather(Tensor input, List<Tensor> outputs, GroupRank dst) {
        return run("gather", b -> {
            members.checkRank(dst, "dst");
            DeviceBuffer in = TensorBuffers.of(input, "input");
            List<DeviceBuffer> outs = rank() == dst.rank()
                    ? TensorBuffers.list(outputs, size(), in.dtype(), in.numel(), "outputs")
                    : TensorBuffers.none(outputs, "outputs", "dst", rank());
            Future<Void> work = flightRecorder.collective("gather", () -> b.gather(outs, in, dst.rank()), in);
            return readUntilDone(writtenWhenDone(work, outputs == null ? List.of() : outputs), input);
        });
    }

    /**
     * Sends {@code inputs.get(r)} of global rank {@code src} to group rank r's {@code output} (others pass an empty
     * list).
     */
    public Future<Void> scatter(Tensor output, List<Tensor> inputs, int src) {
        return scatter(output, inputs, group(src, "src"));
    }

    /** {@link #scatter(Tensor, List, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<Void> scatter(Tensor output, List<Tensor> inputs, GroupRank src) {
        return run("scatter", b -> {
            members.checkRank(src, "src");
            DeviceBuffer out = TensorBuffers.of(output, "output");
            List<DeviceBuffer> ins = rank() == src.rank()
                    ? TensorBuffers.list(inputs, size(), out.dtype(), out.numel(), "inputs")
                    : TensorBuffers.none(inputs, "inputs", "src", rank());
            Future<Void> work = flightRecorder.collective("scatter", () -> b.scatter(out, ins, src.rank()), out);
            return readUntilDone(writtenWhenDone(work, output), inputs);
        });
    }

    /** Sums {@code inputs.get(r)} over the members into rank r's {@code output}. */
    public Future<Void> reduceScatter(Tensor output, List<Tensor> inputs) {
        return reduceScatter(output, inputs, ReduceOp.SUM);
    }

    /** Reduces {@code inputs.get(r)} over the members with {@code op} into rank r's {@code output}. */
    public Future<Void> reduceScatter(Tensor output, List<Tensor> inputs, ReduceOp op) {
        return run("reduceScatter", b -> {
            DeviceBuffer out = TensorBuffers.of(output, "output");
            checkOp(op, out.dtype());
            List<DeviceBuffer> ins = TensorBuffers.list(inputs, size(), out.dtype(), out.numel(), "inputs");
            if (isPremul(op)) {
                return reduceScatter(output, inputs.stream().map(t -> t.mul(op.factor())).toList(), ReduceOp.SUM);
            }
            Future<Void> work = flightRecorder.collective("reduceScatter", () -> b.reduceScatter(out, ins, op), out);
            return readUntilDone(writtenWhenDone(work, output), inputs);
        });
    }

    /**
     * {@code batch_isend_irecv}: starts every send and receive of {@code ops}, in order, and returns their futures
     * in the same order (a send's completes with null, a receive's with the sender's rank). Every op is checked
     * before any starts.
     *
     * @throws IllegalArgumentException when {@code ops} is empty or an op's peer is outside the group or this rank
     */
    public List<Future<?>> batchIsendIrecv(List<P2POp> ops) {
        member();
        if (ops == null || ops.isEmpty()) {
            throw new IllegalArgumentException("batchIsendIrecv needs at least one P2POp");
        }
        for (int i = 0; i < ops.size(); i++) {
            P2POp op = Objects.requireNonNull(ops.get(i), "ops[" + i + "] must not be null");
            members.checkPeer(members.toGroup(op.peer(), "ops[" + i + "].peer"), "ops[" + i + "].peer", rank());
        }
        List<Future<?>> started = new ArrayList<>(ops.size());
        for (P2POp op : ops) {
            started.add(op.op() == P2POp.Kind.ISEND ? isend(op.tensor(), op.peer(), op.tag())
                    : irecv(op.tensor(), op.peer(), op.tag()));
        }
        return started;
    }

    /**
     * {@code all_reduce_coalesced}: reduces every tensor of {@code tensors} in place with one collective over
     * their concatenation (fewer, larger messages than one {@link #allReduce} each).
     *
     * @throws IllegalArgumentException when {@code tensors} is empty or mixes dtypes or devices
     */
    public Future<Void> allReduceCoalesced(List<Tensor> tensors, ReduceOp op) {
        return run("allReduceCoalesced", b -> {
            Tensor flat = Coalesced.flatten(tensors, "tensors");
            return allReduce(flat, op).map(v -> {
                Coalesced.unflatten(flat, tensors, 0);
                return null;
            });
        });
    }

    /**
     * {@code all_gather_coalesced}: rank r's {@code inputs.get(i)} lands in {@code outputs.get(r).get(i)} on every
     * member, through one all-gather of the inputs' concatenation.
     *
     * @throws IllegalArgumentException when the inputs are empty or mix dtypes or devices, or {@code outputs} does
     *                                  not hold one list per rank whose tensors match the inputs' element counts
     */
    public Future<Void> allGatherCoalesced(List<List<Tensor>> outputs, List<Tensor> inputs) {
        return run("allGatherCoalesced", b -> {
            Tensor flat = Coalesced.flatten(inputs, "inputs");
            Coalesced.checkOutputs(outputs, inputs, size());
            Tensor all = Tensor.empty(flat.device(), flat.dtype(), flat.numel() * size());
            return allGatherIntoTensor(all, flat).map(v -> {
                for (int r = 0; r < size(); r++) {
                    Coalesced.unflatten(all, outputs.get(r), r * flat.numel());
                }
                return null;
            });
        });
    }

    /** {@link #reduceScatterTensor(Tensor, Tensor, ReduceOp)} with {@link ReduceOp#SUM}. */
    public Future<Void> reduceScatterTensor(Tensor output, Tensor input) {
        return reduceScatterTensor(output, input, ReduceOp.SUM);
    }

    /**
     * {@code reduce_scatter_tensor}: {@code input} holds {@code size()} blocks of {@code output.numel()} elements
     * (concatenated, or stacked along a first dimension of {@code size()}); the r-th blocks of every member are
     * reduced with {@code op} into rank r's {@code output}.
     *
     * @throws IllegalArgumentException when the dtypes differ or {@code input} does not hold
     *                                  {@code size() * output.numel()} elements
     */
    public Future<Void> reduceScatterTensor(Tensor output, Tensor input, ReduceOp op) {
        return run("reduceScatterTensor", b -> {
            DeviceBuffer out = TensorBuffers.of(output, "output");
            DeviceBuffer in = TensorBuffers.of(input, "input");
            checkOp(op, out.dtype());
            if (isPremul(op)) {
                return reduceScatterTensor(output, input.mul(op.factor()), ReduceOp.SUM);
            }
            List<DeviceBuffer> blocks = RankBlocks.equal(in, "input", out, "output", size());
            Future<Void> work = flightRecorder.collective("reduceScatterTensor",
                    () -> b.reduceScatter(out, blocks, op), in, out);
            return readUntilDone(writtenWhenDone(work, output), input);
        });
    }

    /** {@link #allToAllSingle(Tensor, Tensor, int[], int[])} with equal splits. */
    public Future<Void> allToAllSingle(Tensor output, Tensor input) {
        return allToAllSingle(output, input, null, null);
    }

    /**
     * {@code all_to_all_single}: splits {@code input} along its first dimension into {@code size()} blocks of
     * {@code inputSplitSizes[r]} rows, sends block r to rank r, and receives rank r's block for this rank into
     * the r-th block of {@code output}, {@code outputSplitSizes[r]} rows. A null split divides the first dimension
     * equally. Each output block must be as large as what its sender sends, or the operation fails.
     *
     * @throws IllegalArgumentException when the dtypes or the rows' shapes differ, a split has a negative entry,
     *                                  not one per rank, or does not add up to the first dimension
     */
    public Future<Void> allToAllSingle(Tensor output, Tensor input, int[] outputSplitSizes, int[] inputSplitSizes) {
        return run("allToAllSingle", b -> {
            DeviceBuffer out = TensorBuffers.of(output, "output");
            DeviceBuffer in = TensorBuffers.of(input, "input");
            if (in.dtype() != out.dtype()) {
                throw new IllegalArgumentException("allToAllSingle needs one dtype: input is " + in.dtype()
                        + ", output " + out.dtype());
            }
            long[] rowShape = RankBlocks.rowShape(in, "input");
            if (!Arrays.equals(rowShape, RankBlocks.rowShape(out, "output"))) {
                throw new IllegalArgumentException("input " + in + " and output " + out + " must have rows of one shape"
                        + " (all dimensions but the first)");
            }
            List<DeviceBuffer> ins = RankBlocks.rows(in, inputSplitSizes, "inputSplitSizes", rowShape, size());
            List<DeviceBuffer> outs = RankBlocks.rows(out, outputSplitSizes, "outputSplitSizes", rowShape, size());
            Future<Void> work = flightRecorder.collective("allToAllSingle", () -> b.allToAll(outs, ins), in, out);
            return readUntilDone(writtenWhenDone(work, output), input);
        });
    }

    /**
     * Sends {@code inputs.get(r)} to rank r and receives rank r's tensor for this rank into {@code outputs.get(r)}
     * ({@code all_to_all}); sizes may differ per pair but each output must match what its sender sends.
     */
    public Future<Void> allToAll(List<Tensor> outputs, List<Tensor> inputs) {
        return run("allToAll", b -> {
            List<DeviceBuffer> ins = TensorBuffers.list(inputs, size(), null, 0, "inputs");
            List<DeviceBuffer> outs = TensorBuffers.list(outputs, size(), null, 0, "outputs");
            DType dtype = ins.getFirst().dtype();
            for (DeviceBuffer d : Stream.concat(ins.stream(), outs.stream()).toList()) {
                if (d.dtype() != dtype) {
                    throw new IllegalArgumentException("allToAll needs one dtype for all tensors: found " + dtype
                            + " and " + d.dtype());
                }
            }
            Future<Void> work = flightRecorder.collective("allToAll", () -> b.allToAll(outs, ins));
            return readUntilDone(writtenWhenDone(work, outputs), inputs);
        });
    }

    /** Completes once every member has called it. */
    public Future<Void> barrier() {
        if (outside("barrier")) {
            return Future.succeededFuture();
        }
        return flightRecorder.collective("barrier", () -> member().barrier());
    }

    /**
     * c10d's {@code monitored_barrier}: rank 0 waits up to {@code timeout} for every other member and fails
     * naming the ranks that did not arrive (the first one, or all of them with {@code waitAllRanks}); the
     * others wait for rank 0's release. A debugging aid for finding the rank that hangs.
     */
    public Future<Void> monitoredBarrier(Duration timeout, boolean waitAllRanks) {
        return run("monitoredBarrier", b -> {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout=" + timeout + " must be positive");
            }
            return MonitoredBarrier.run(b, name, vertx, timeout, waitAllRanks);
        });
    }

    // ---- objects ---------------------------------------------------------------------------------------------

    /**
     * {@code all_gather_object}: every member's {@code object}, in rank order, encoded with the safe
     * {@link io.tensorbus.io.ObjectCodec#standard()} codec (never Java serialization).
     */
    public Future<List<Object>> allGatherObject(Object object) {
        return GroupObjects.allGather(this, object);
    }

    /**
     * {@code broadcast_object_list}: replaces the elements of {@code objects} on every member with global rank
     * {@code src}'s (the lists must have the same size everywhere and be mutable); completes with the list.
     */
    public Future<List<Object>> broadcastObjectList(List<Object> objects, int src) {
        return broadcastObjectList(objects, group(src, "src"));
    }

    /** {@link #broadcastObjectList(List, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<List<Object>> broadcastObjectList(List<Object> objects, GroupRank src) {
        return GroupObjects.broadcastList(this, objects, src);
    }

    /**
     * {@code gather_object}: every member's {@code object}, in group-rank order, on global rank {@code dst}; the
     * other members' futures complete with an empty list.
     */
    public Future<List<Object>> gatherObject(Object object, int dst) {
        return gatherObject(object, group(dst, "dst"));
    }

    /** {@link #gatherObject(Object, int)} on rank {@code dst} of this group ({@code group_dst}). */
    public Future<List<Object>> gatherObject(Object object, GroupRank dst) {
        return GroupObjects.gather(this, object, dst);
    }

    /**
     * {@code scatter_object_list}: global rank {@code src}'s {@code inputs.get(r)} becomes the first element of group
     * rank r's {@code output} (a mutable list of at least one element); the others pass null or an empty list as
     * {@code inputs}. Completes with {@code output}.
     *
     * @throws IllegalArgumentException when {@code output} is empty, or on {@code src}, {@code inputs} does not
     *                                  hold one object per rank
     */
    public Future<List<Object>> scatterObjectList(List<Object> output, List<Object> inputs, int src) {
        return scatterObjectList(output, inputs, group(src, "src"));
    }

    /** {@link #scatterObjectList(List, List, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<List<Object>> scatterObjectList(List<Object> output, List<Object> inputs, GroupRank src) {
        return GroupObjects.scatterList(this, output, inputs, src);
    }

    /**
     * {@code send_object_list}: sends {@code objects} to global rank {@code dst}, who receives them with
     * {@link #recvObjectList}. Object lists travel with a tag of their own, apart from tensor messages.
     */
    public Future<Void> sendObjectList(List<Object> objects, int dst) {
        return sendObjectList(objects, group(dst, "dst"));
    }

    /** {@link #sendObjectList(List, int)} to rank {@code dst} of this group ({@code group_dst}). */
    public Future<Void> sendObjectList(List<Object> objects, GroupRank dst) {
        return GroupObjects.sendList(this, objects, dst);
    }

    /**
     * {@code recv_object_list}: replaces the elements of {@code objects} (mutable, as long as the sent list) with
     * those global rank {@code src} (or {@link #ANY_SOURCE}) sent with {@link #sendObjectList}; completes with the
     * sender's global rank.
     */
    public Future<Integer> recvObjectList(List<Object> objects, int src) {
        return src == ANY_SOURCE ? GroupObjects.recvListFromAny(this, objects)
                : recvObjectList(objects, group(src, "src"));
    }

    /** {@link #recvObjectList(List, int)} from rank {@code src} of this group ({@code group_src}). */
    public Future<Integer> recvObjectList(List<Object> objects, GroupRank src) {
        return GroupObjects.recvList(this, objects, src);
    }

    // ---- subgroups ---------------------------------------------------------------------------------------------

    /**
     * The handle of a new subgroup of {@code ranks} (sorted global ranks of this group): on a member, with its
     * own connections from {@code provider}, under a prefix of this group's store; elsewhere, a non-member's.
     */
    Future<ProcessGroup> subgroup(int[] ranks, Duration limit, BackendProvider provider) {
        if (properties.containsKey(PyTorchJoin.INTEROP_PROPERTY)) {
            return pytorchSubgroup(ranks, limit, provider);
        }
        String subName = name + ".sub" + subgroups.getAndIncrement();
        return subgroup(ranks, limit, provider, subName, new PrefixStore(subName, store));
    }

    /**
     * The handle of subgroup {@code subName} of {@code ranks}: on a member, its backend from {@code provider} over
     * {@code sub}; elsewhere, a non-member's.
     */
    private Future<ProcessGroup> subgroup(int[] ranks, Duration limit, BackendProvider provider, String subName,
                                          Store sub) {
        int self = members.self();
        int mine = Arrays.binarySearch(ranks, self);
        if (mine < 0) {
            return Future.succeededFuture(new ProcessGroup(null, subName, ranks, self, store, vertx, limit, properties,
                    secret, () -> { }));
        }
        BackendOptions options = new BackendOptions(mine, ranks.length, sub, limit, subName, ranks, vertx, properties,
                secret);
        return provider.create(options).map(b -> new ProcessGroup(b, subName, ranks, self, sub, vertx, limit,
                properties, secret, () -> { }));
    }

    /** Marks this group as the default group of a PyTorch job whose store is {@code job} (PyTorch's default store). */
    void joinedPyTorchJob(Store job) {
        this.pytorchJob = job;
    }

    /**
     * A subgroup as PyTorch's {@code new_group} makes it, so the job's PyTorch processes meet it: named
     * {@code str(_group_count)} (the default group is "0", then one per group in the order all processes make them),
     * its members' backend under that name in the job's store, then {@link PyTorchJoin#afterBackend} on every
     * process. Only the job's default group makes them, as PyTorch counts groups across the job.
     */
    private Future<ProcessGroup> pytorchSubgroup(int[] ranks, Duration limit, BackendProvider provider) {
        Store job = pytorchJob;
        if (job == null) {
            return Future.failedFuture(new UnsupportedOperationException("group '" + name + "' is a subgroup of a"
                    + " PyTorch job: make its groups from the job's default group, as new_group does"));
        }
        PyTorchWire wire = PyTorchWire.valueOf(properties.get(PyTorchJoin.INTEROP_PROPERTY));
        int groupCount = 1 + subgroups.incrementAndGet();
        String subName = String.valueOf(groupCount - 1);
        int mine = Arrays.binarySearch(ranks, members.self());
        return subgroup(ranks, limit, provider, subName, PyTorchJoin.groupStore(job, wire, subName))
                .compose(pg -> PyTorchJoin.afterBackend(vertx, job, wire, groupCount, mine < 0 ? -1 : mine, size(),
                        limit).map(pg).onFailure(e -> pg.destroy()));
    }

    /** Closes the connections (and, for the default group, the store and Vert.x it created); idempotent. */
    public Future<Void> destroy() {
        // Once: the exit hook may destroy the group while the program does.
        if (!closed.compareAndSet(false, true)) {
            return Future.succeededFuture();
        }
        if (atExit != null) {
            atExit.done();
        }
        DefaultGroups.destroyed(this);
        meters.remove();
        Future<Void> done = backend == null ? Future.succeededFuture() : backend.close();
        return done.eventually(() -> {
            release.run();
            return Future.succeededFuture();
        });
    }

    /** Has the exit hook destroy this group, with a warning, if the program ends without doing so. */
    void closeAtExit() {
        atExit = ProcessExit.closeAtExit("process group '" + name + "' (rank " + rank() + " of " + size() + ")",
                this::destroy);
    }

    /** {@link #destroy()}, waiting up to 10 seconds (not on an event loop). */
    @Override
    public void close() {
        Blocking.await(destroy(), Duration.ofSeconds(10), "closing group '" + name + "'");
    }

    @Override
    public String toString() {
        return "ProcessGroup[" + name + ", rank " + rank() + " of " + size() + ", " + backendName() + "]";
    }

    // ---- checks -----------------------------------------------------------------------------------------------

    /**
     * The device the group is bound to ({@link InitOptions.Builder#deviceId}, PyTorch's {@code bound_device_id}),
     * or empty.
     */
    public Optional<Device> boundDeviceId() {
        String id = properties.get(InitOptions.DEVICE_ID);
        return id == null ? Optional.empty() : Optional.of(Device.parse(id));
    }

    /** The member's backend as host messages (the object collectives' bytes) reach it; see {@link #member}. */
    Backend memberForHostMessages(String op) {
        return HostStagingBackend.forHostMessages(member(), boundDeviceId().orElse(null), op);
    }

    Backend member() {
        if (backend == null) {
            throw notMember("this operation");
        }
        if (closed.get()) {
            throw new IllegalStateException("group '" + name + "' was destroyed");
        }
        return backend;
    }

    /**
     * True on a rank outside this group, where an operation of the group does nothing (PyTorch's
     * {@code _rank_not_in_group}); the first such call on this group logs a warning naming {@code op}.
     */
    boolean outside(String op) {
        if (backend != null) {
            return false;
        }
        members.warnOutside(op);
        return true;
    }

    /**
     * {@code body} with this member's backend; on a process outside the group, nothing, as PyTorch does there (see
     * {@link #outside}).
     */
    private Future<Void> run(String op, Function<Backend, Future<Void>> body) {
        return outside(op) ? Future.succeededFuture() : body.apply(member());
    }

    /** The failure of an operation that cannot run on a process outside the group. */
    IllegalStateException notMember(String op) {
        return members.notMember(op);
    }

    /** The members, and the checks of ranks that arguments name. */
    Membership members() {
        return members;
    }

    /**
     * The group rank of global rank {@code global}, for an overload taking global ranks; on a process outside the
     * group, where the operation does nothing and arguments are not checked, group rank 0.
     */
    private GroupRank group(int global, String what) {
        if (backend == null) {
            return GroupRank.of(0);
        }
        member();
        return members.toGroup(global, what);
    }

    /**
     * PREMUL_SUM reaches backends as the SUM of pre-multiplied tensors, so every backend runs it (PyTorch has it on
     * NCCL only).
     */
    private static boolean isPremul(ReduceOp op) {
        return op.type() == ReduceOp.Type.PREMUL_SUM;
    }

    private static void checkOp(ReduceOp op, DType dtype) {
        Objects.requireNonNull(op, "op must not be null").checkSupports(dtype);
    }

    /** How long a blocking call waits: past the group's timeout, so the operation's own failure comes first. */
    Duration blockingDeadline() {
        return timeout.plusSeconds(5);
    }
}
