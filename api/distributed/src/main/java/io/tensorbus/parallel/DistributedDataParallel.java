package io.tensorbus.parallel;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.DebugLevel;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.algorithms.CommHook;
import io.tensorbus.distributed.algorithms.CommHooks;
import io.tensorbus.distributed.algorithms.Join;
import io.tensorbus.distributed.algorithms.JoinHook;
import io.tensorbus.distributed.algorithms.Joinable;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.CoalescedBroadcast;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Data-parallel training (PyTorch's {@code torch.nn.parallel.DistributedDataParallel}): every rank holds a
 * replica of the wrapped module, runs it on its own part of the batch, and the backward pass all-reduces
 * the gradients so that every replica takes the same optimizer step.
 *
 * <p>At construction the replicas' parameter shapes are compared (a mismatch fails on every rank, naming
 * the parameter) and rank 0's parameters and buffers are broadcast to all. Gradients are gathered in
 * buckets (reverse parameter order, 1 MiB for the first, {@code bucketCapMb} after); a bucket is
 * all-reduced as soon as its last gradient is ready, overlapping the rest of the backward pass, and
 * {@code backward()} returns once every bucket is reduced and {@code .grad} holds the average over ranks.
 *
 * <p>The state-dict keys carry the prefix {@code module.}, as PyTorch's. One instance is used from one
 * thread at a time; {@link Builder#build()} and the backward pass block and must not run on a Vert.x event
 * loop.
 */
public final class DistributedDataParallel extends Module implements Joinable, AutoCloseable {
    /** PyTorch's {@code _DEFAULT_FIRST_BUCKET_BYTES}. */
    static final long FIRST_BUCKET_BYTES = 1024 * 1024;

    private final Module module;
    private final ProcessGroup group;
    private final boolean broadcastBuffers;
    private final List<Tensor> parameters;
    private final Reducer reducer;
    private boolean requireGradSync = true;

    private DistributedDataParallel(Builder b) {
        this.module = registerModule("module", b.module);
        this.group = b.group;
        this.broadcastBuffers = b.broadcastBuffers;
        Map<String, Tensor> named = trainable(b.module);
        this.parameters = List.copyOf(named.values());
        verifyShapesAcrossRanks(b.module);
        await(CoalescedBroadcast.broadcast(group, stateTensors(), 0),
                "the broadcast of rank 0's parameters and buffers");
        long cap = (long) (b.bucketCapMb * 1024 * 1024);
        this.reducer = new Reducer(group, parameters, List.copyOf(named.keySet()), Math.min(FIRST_BUCKET_BYTES, cap),
                cap, b.gradientAsBucketView, b.findUnusedParameters, b.staticGraph);
        train(b.module.isTraining());
        if (DebugLevel.current().includes(DebugLevel.INFO)) {
            System.getLogger(DistributedDataParallel.class.getName()).log(System.Logger.Level.INFO,
                    "DistributedDataParallel on rank {0} of group ''{1}'': {2} parameters in {3} buckets {4}"
                            + " (findUnusedParameters {5}, staticGraph {6}, gradientAsBucketView {7})",
                    group.rank(), group.name(), parameters.size(), reducer.bucketCount(), reducer.bucketNames(),
                    b.findUnusedParameters, b.staticGraph, b.gradientAsBucketView);
        }
    }

    /**
     * Starts building a wrapper of {@code module} over {@code group}.
     *
     * @throws NullPointerException when either is null
     */
    public static Builder builder(Module module, ProcessGroup group) {
        return new Builder(module, group);
    }

    /** The wrapped module (PyTorch's {@code ddp.module}). */
    public Module module() {
        return module;
    }

    /** The group the gradients are averaged over. */
    public ProcessGroup processGroup() {
        return group;
    }

    /**
     * Runs the wrapped module. A forward with grad mode on and outside {@link #noSync()} is synchronised: the
     * next backward pass averages the gradients, and with {@code broadcastBuffers} rank 0's buffers
     * (BatchNorm's running statistics) are copied to every rank before the module runs.
     *
     * @throws NullPointerException when {@code input} is null
     * @throws IllegalStateException when the previous iteration's reduction did not finish (a parameter got
     *     no gradient; the message names them) or failed
     */
    @Override
    public Tensor forward(Tensor input) {
        Objects.requireNonNull(input, "input must not be null");
        long begin = reducer.stepStart();
        boolean sync = Autograd.isGradEnabled() && requireGradSync;
        if (sync) {
            reducer.checkPriorReductionFinished();
        }
        boolean buffers = sync && broadcastsBuffers();
        boolean inJoin = Join.notifyJoinContext(this);
        if (inJoin) {
            allReduceJoinFlags(sync ? 1 : 0, buffers ? 1 : 0);
        }
        if (buffers) {
            syncBuffers(inJoin, true);
        }
        Tensor output = module.forward(input);
        if (sync) {
            reducer.prepareForBackward(output, begin);
        }
        return output;
    }

    /**
     * Turns off gradient synchronisation until the returned scope is closed (PyTorch's {@code no_sync()}):
     * backward passes inside it only accumulate into {@code .grad}; the first synchronised backward after it
     * averages the accumulated sum. This is gradient accumulation without a collective per micro-batch.
     */
    public NoSync noSync() {
        return new NoSync(this);
    }

    /**
     * Enters the join context for uneven inputs (PyTorch's {@code Join([ddp])}): ranks keep calling
     * {@link #forward} and backward for as many batches as they have; when a rank runs out it closes the
     * scope, which then shadows the collectives of the ranks still training (with zero gradients; averages
     * still divide by the full world size) until every rank has joined, and finally copies the parameters
     * of a rank that trained longest to all. Every rank must enter the context.
     *
     * @throws IllegalStateException when a join context is already open
     */
    public Join join() {
        return Join.of(this);
    }

    /**
     * The join hook ({@code _DDPJoinHook}): each shadowed iteration all-reduces, with zeros, whether the ranks still
     * training synchronise gradients and buffers in it, then joins the buffer broadcast and the gradient reduction
     * (with zero gradients; the averaged gradients land in {@code .grad}, so a ZeroRedundancyOptimizer joined after
     * DDP steps its shard with them). Once all ranks have joined, the parameters and buffers of a rank that joined
     * last are broadcast, because the ranks that joined early missed the later optimizer steps.
     */
    @Override
    public JoinHook joinHook() {
        return new JoinHook() {
            @Override
            public void mainHook() {
                long[] flags = allReduceJoinFlags(0, 0);
                if (flags[1] > 0) {
                    syncBuffers(true, false);
                }
                if (flags[0] > 0) {
                    reducer.shadowBackward();
                }
            }

            @Override
            public void postHook(boolean isLastJoiner) {
                syncState(commonRank(isLastJoiner));
            }
        };
    }

    /** The group of the collectives the join hook shadows. */
    @Override
    public ProcessGroup joinProcessGroup() {
        return group;
    }

    /** Sums (ranks whose backward averages gradients, ranks that broadcast buffers first) in a join context. */
    private long[] allReduceJoinFlags(int gradients, int buffers) {
        // On the parameters' device: a device backend (NCCL) takes only its device's tensors.
        Tensor t = Tensor.of(new int[] {gradients, buffers}, 2).to(module.device());
        await(group.allReduce(t, ReduceOp.SUM), "the join context's count of ranks synchronising");
        return new long[] {t.getLong(0), t.getLong(1)};
    }

    /**
     * Replaces the all-reduce of each bucket with {@code hook} (PyTorch's {@code register_comm_hook}); see
     * {@link CommHooks} for the built-in ones. Allowed once, before the first backward pass.
     *
     * @throws NullPointerException when {@code hook} is null
     * @throws IllegalStateException when a hook is already registered or training has started
     */
    public void registerCommHook(CommHook hook) {
        reducer.registerCommHook(Objects.requireNonNull(hook, "hook"));
    }

    /**
     * How long the last synchronised backward pass waited, after its compute ended, for communication to
     * finish: the communication the backward pass did not hide.
     */
    public Duration lastExposedCommunication() {
        return reducer.lastExposedCommunication();
    }

    /**
     * The parameter names (as in the wrapped module) of each bucket, in reduction order: the first bucket
     * holds the last layers, whose gradients backward produces first.
     */
    public List<List<String>> bucketNames() {
        return reducer.bucketNames();
    }

    /**
     * Detaches the gradient hooks from the module's parameters: later backward passes through the module
     * only accumulate locally, and the module may be wrapped again. The wrapper must not be used afterwards.
     */
    @Override
    public void close() {
        reducer.removeHooks();
    }

    @Override
    protected String extraRepr() {
        return "world=" + group.size() + ", buckets=" + reducer.bucketCount();
    }

    /** True when buffers are broadcast before each synchronised forward and the module has any. */
    boolean broadcastsBuffers() {
        return broadcastBuffers && !module.buffers().isEmpty();
    }

    Reducer reducer() {
        return reducer;
    }

    boolean requiresGradSync() {
        return requireGradSync;
    }

    void setRequireGradSync(boolean value) {
        requireGradSync = value;
    }

    /**
     * Broadcasts the buffers from rank 0, or, inside a join context, from the highest rank still training
     * ({@code training} says whether this rank is one).
     */
    void syncBuffers(boolean joinAware, boolean training) {
        int src = joinAware ? commonRank(training) : 0;
        await(CoalescedBroadcast.broadcast(group, module.buffers(), src), "the broadcast of buffers from rank " + src);
    }

    /** Broadcasts parameters and buffers from {@code src}. */
    void syncState(int src) {
        await(CoalescedBroadcast.broadcast(group, stateTensors(), src), "the broadcast of the model from rank " + src);
    }

    /** The highest rank for which {@code candidate} holds (c10d's {@code _find_common_rank}), or -1 when none. */
    int commonRank(boolean candidate) {
        Tensor t = Tensor.of(new long[] {candidate ? group.rank() : -1}, 1).to(module.device());
        await(group.allReduce(t, ReduceOp.MAX), "the election of a source rank");
        return (int) t.getLong(0);
    }

    <T> T await(Future<T> work, String what) {
        return Blocking.await(work, group.timeout().plusSeconds(5), "DistributedDataParallel on rank " + group.rank()
                + ": " + what);
    }

    private List<Tensor> stateTensors() {
        List<Tensor> out = new ArrayList<>(module.parameters());
        out.addAll(module.buffers());
        return out;
    }

    private static Map<String, Tensor> trainable(Module module) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        module.namedParameters().forEach((name, p) -> {
            if (p.requiresGrad() && seen.add(p)) {
                out.put(name, p);
            }
        });
        return out;
    }

    /** PyTorch's {@code _verify_param_shape_across_processes}: every rank compares every rank's list. */
    private void verifyShapesAcrossRanks(Module m) {
        List<String> mine = signature(m);
        List<Object> all = await(group.allGatherObject(mine), "the comparison of parameter shapes across ranks");
        for (int r = 0; r < all.size(); r++) {
            List<?> theirs = (List<?>) all.get(r);
            String diff = firstDifference(mine, theirs);
            if (diff != null) {
                throw new IllegalArgumentException("DistributedDataParallel on rank " + group.rank() + ": the module's"
                        + " parameters differ from rank " + r + "'s: " + diff + ". Every rank must wrap the same"
                        + " architecture");
            }
        }
    }

    private static List<String> signature(Module m) {
        List<String> out = new ArrayList<>();
        Map<String, Tensor> state = new LinkedHashMap<>(m.namedParameters());
        state.putAll(m.namedBuffers());
        state.forEach((name, t) -> out.add(name + " " + t.dtype().name().toLowerCase(Locale.ROOT)
                + Shapes.str(t.shape())));
        return out;
    }

    private static String firstDifference(List<String> mine, List<?> theirs) {
        for (int i = 0; i < Math.max(mine.size(), theirs.size()); i++) {
            Object a = i < mine.size() ? mine.get(i) : "(nothing)";
            Object b = i < theirs.size() ? theirs.get(i) : "(nothing)";
            if (!a.equals(b)) {
                return "parameter or buffer " + i + " is " + a + " here and " + b + " there";
            }
        }
        return null;
    }

    /** The settings of a {@link DistributedDataParallel}, with PyTorch's defaults. */
    public static final class Builder {
        private final Module module;
        private final ProcessGroup group;
        private double bucketCapMb = 25;
        private boolean broadcastBuffers = true;
        private boolean findUnusedParameters;
        private boolean gradientAsBucketView;
        private boolean staticGraph;

        private Builder(Module module, ProcessGroup group) {
            this.module = Objects.requireNonNull(module, "module");
            this.group = Objects.requireNonNull(group, "group");
        }

        /**
         * The size cap of each gradient bucket after the first, in MiB (default 25).
         *
         * @throws IllegalArgumentException unless positive and finite
         */
        public Builder bucketCapMb(double mb) {
            if (!(mb > 0) || Double.isInfinite(mb)) {
                throw new IllegalArgumentException("bucketCapMb must be a positive number of MiB, got " + mb);
            }
            this.bucketCapMb = mb;
            return this;
        }

        /** Copy rank 0's buffers to every rank before each synchronised forward (default true). */
        public Builder broadcastBuffers(boolean value) {
            this.broadcastBuffers = value;
            return this;
        }

        /**
         * Walk the autograd graph after each forward and treat parameters it does not reach as ready with a
         * zero gradient (default false: the walk costs time, and without it an unused parameter stops the
         * reduction with an error at the next forward).
         */
        public Builder findUnusedParameters(boolean value) {
            this.findUnusedParameters = value;
            return this;
        }

        /**
         * Make each {@code .grad} a view into its bucket (default false): saves one copy of the gradients
         * and their memory. Zeroing {@code .grad} in place keeps the views; setting it to null makes the next
         * reduction put a view back.
         */
        public Builder gradientAsBucketView(boolean value) {
            this.gradientAsBucketView = value;
            return this;
        }

        /**
         * Declare that the graph is the same in every iteration (default false): the first iteration reduces
         * everything at its end and records which parameters are used and how often their gradients arrive;
         * later iterations reuse that, which also allows gradients that arrive several times in one backward
         * pass (reentrant backward, activation checkpointing) and unused parameters without a graph walk.
         */
        public Builder staticGraph(boolean value) {
            this.staticGraph = value;
            return this;
        }

        /**
         * Compares the parameter shapes across ranks, broadcasts rank 0's state and installs the gradient
         * hooks. Every rank of the group must call it.
         *
         * @throws IllegalArgumentException when the module has no parameter that requires grad, the ranks'
         *     parameters differ (the message names the first differing one), or this process is not a member
         *     of the group
         * @throws IllegalStateException on a Vert.x event-loop thread
         * @throws io.tensorbus.c10d.CommunicationException when the group fails or times out
         */
        public DistributedDataParallel build() {
            if (!group.isMember()) {
                throw new IllegalArgumentException("this process is not a member of the group it asked"
                        + " DistributedDataParallel to average over");
            }
            if (trainable(module).isEmpty()) {
                throw new IllegalArgumentException("DistributedDataParallel needs a module with at least one parameter"
                        + " that requires grad; " + module.getClass().getSimpleName() + " has none");
            }
            for (Tensor p : module.parameters()) {
                if (p.dtype() != DType.FLOAT32 && p.dtype() != DType.FLOAT64 && p.dtype() != DType.FLOAT16
                        && p.dtype() != DType.BFLOAT16) {
                    throw new IllegalArgumentException("parameters must be floating point, got " + p.dtype());
                }
            }
            return new DistributedDataParallel(this);
        }
    }
}
