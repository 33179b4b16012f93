package io.tensorbus.distributed.optim;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.GradMode;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.GroupRank;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.algorithms.CommHook;
import io.tensorbus.distributed.algorithms.GradBucket;
import io.tensorbus.distributed.algorithms.Join;
import io.tensorbus.distributed.algorithms.JoinHook;
import io.tensorbus.distributed.algorithms.Joinable;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.CoalescedBroadcast;
import io.tensorbus.internal.distributed.OffLoop;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.optim.ParamGroup;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code torch.distributed.optim.ZeroRedundancyOptimizer} (ZeRO stage 1): the optimizer state is sharded across the
 * members of a group. Every parameter is owned by one rank, chosen as PyTorch does (per parameter group, largest
 * first, each to the rank with the fewest elements so far); each rank keeps a local optimizer ({@link #optim()})
 * over the parameters it owns, so it holds about 1/world of the state. {@link #step()} steps the local optimizer
 * and then broadcasts every rank's updated parameters to the others, so all ranks end the step with the same model
 * a plain optimizer over all parameters would give.
 *
 * <pre>{@code
 * ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.adam(1e-3)).group(pg)
 *         .build(model.parameters());
 * loss.backward();          // with DDP, the gradients are already averaged
 * zero.step();
 * zero.zeroGrad();
 * }</pre>
 *
 * <p>Gradients must be equal on every rank when {@link #step()} runs (as after DistributedDataParallel's
 * backward). Every member must call {@link #step()} and {@link #consolidateStateDict} together, in the same order.
 * Not thread-safe; never call a blocking method on an event loop.
 */
public final class ZeroRedundancyOptimizer implements Joinable {
    private final ProcessGroup group;
    /** The steps taken, numbering them on the timeline. */
    private long steps;
    private final List<ParamGroup> paramGroups;
    /** Every parameter in group order: a parameter's index here is its index in the full state dict. */
    private final List<Tensor> all;
    /** The owning group rank of each parameter of {@link #all}. */
    private final int[] owner;
    /** The parameters each group rank owns, in {@link #all}'s order. */
    private final List<List<Tensor>> byRank;
    /** For each of the local optimizer's parameters, in its order, the parameter's index in {@link #all}. */
    private final List<Integer> localToGlobal = new ArrayList<>();
    private final List<ParamGroup> localGroups = new ArrayList<>();
    private final Optimizer local;
    private final boolean bucketView;
    private final boolean overlap;
    /** This rank's parameters, for the overlapped step's lookups. */
    private final Set<Tensor> owned = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The overlapped steps of the current backward pass, one after another, in bucket order. */
    private Future<Void> overlappedSteps = Future.succeededFuture();
    private boolean steppedInBackward;
    private OptimizerState consolidated;

    private ZeroRedundancyOptimizer(ProcessGroup group, OptimizerSpec spec, List<ParamGroup> groups,
                                    boolean bucketView, boolean overlap) {
        this.group = group;
        this.bucketView = bucketView;
        this.overlap = overlap;
        this.paramGroups = List.copyOf(groups);
        this.all = groups.stream().flatMap(g -> g.params().stream()).toList();
        if (all.isEmpty()) {
            throw new IllegalArgumentException("ZeroRedundancyOptimizer got an empty parameter list");
        }
        this.owner = partition(groups, group.size());
        this.byRank = new ArrayList<>();
        for (int r = 0; r < group.size(); r++) {
            byRank.add(new ArrayList<>());
        }
        for (int i = 0; i < all.size(); i++) {
            byRank.get(owner[i]).add(all.get(i));
        }
        int base = 0;
        for (ParamGroup g : groups) {
            List<Tensor> mine = new ArrayList<>();
            for (int i = 0; i < g.params().size(); i++) {
                if (owner[base + i] == group.rank()) {
                    mine.add(g.params().get(i));
                    localToGlobal.add(base + i);
                }
            }
            base += g.params().size();
            ParamGroup shard = ParamGroup.of(mine);
            localGroups.add(shard);
        }
        for (ParamGroup g : groups) {
            spec.options().forEach((key, value) -> {
                if (!g.options().containsKey(key)) {
                    g.set(key, value);
                }
            });
        }
        copyOptions();
        this.local = spec.buildGroups(localGroups);
        owned.addAll(byRank.get(group.rank()));
    }

    /**
     * A builder for a ZeroRedundancyOptimizer whose local optimizers {@code spec} describes (PyTorch's
     * {@code optimizer_class} and {@code **defaults}).
     *
     * @throws NullPointerException when {@code spec} is null
     */
    public static Builder builder(OptimizerSpec spec) {
        return new Builder(Objects.requireNonNull(spec, "spec"));
    }

    /**
     * PyTorch's partition: per parameter group, the parameters largest first (ties in their order), each to the rank
     * holding the fewest elements so far (ties to the lowest rank); the counts carry over from group to group.
     */
    private static int[] partition(List<ParamGroup> groups, int world) {
        long[] sizes = new long[world];
        int[] owner = new int[groups.stream().mapToInt(g -> g.params().size()).sum()];
        int base = 0;
        for (ParamGroup g : groups) {
            List<Tensor> params = g.params();
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < params.size(); i++) {
                order.add(i);
            }
            order.sort(Comparator.comparingInt((Integer i) -> params.get(i).numel()).reversed());
            for (int i : order) {
                int least = 0;
                for (int r = 1; r < world; r++) {
                    if (sizes[r] < sizes[least]) {
                        least = r;
                    }
                }
                owner[base + i] = least;
                sizes[least] += params.get(i).numel();
            }
            base += params.size();
        }
        return owner;
    }

    /** The group whose members share the state. */
    public ProcessGroup group() {
        return group;
    }

    /**
     * Every parameter group, with all its parameters and its options ({@code param_groups}); an option changed here
     * (a learning-rate schedule, say) reaches the local optimizer at the next {@link #step()}.
     */
    public List<ParamGroup> paramGroups() {
        return paramGroups;
    }

    /**
     * The local optimizer over the parameters this rank owns ({@code optim}); its groups mirror
     * {@link #paramGroups()}.
     */
    public Optimizer optim() {
        return local;
    }

    /** The group rank that owns {@code param} (steps it and broadcasts it). */
    public int ownerOf(Tensor param) {
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i) == param) {
                return owner[i];
            }
        }
        throw new IllegalArgumentException("the tensor is not a parameter of this optimizer");
    }

    /** The parameters group rank {@code rank} owns, in parameter order (unmodifiable). */
    public List<Tensor> parametersOf(int rank) {
        if (rank < 0 || rank >= group.size()) {
            throw new IllegalArgumentException("rank=" + rank + " is not a rank of the group (size " + group.size()
                    + ")");
        }
        return Collections.unmodifiableList(byRank.get(rank));
    }

    /**
     * True when each rank's parameters are broadcast as one flat buffer per dtype
     * ({@code parameters_as_bucket_view}).
     */
    public boolean parametersAsBucketView() {
        return bucketView;
    }

    /**
     * Steps the parameters this rank owns with their {@code .grad}, then broadcasts every rank's parameters from
     * their owner; returns when this rank holds all of them. Blocks; every member must call it.
     *
     * @throws io.tensorbus.c10d.CommunicationException when a broadcast fails or times out
     * @throws IllegalStateException on an event-loop thread
     */
    public void step() {
        Blocking.checkMayBlock("ZeroRedundancyOptimizer.step");
        Join.notifyJoinContext(this);
        int rank = group.globalRank(group.rank());
        TimelineRecorder timeline = TimelineRecorder.of(rank);
        long at = timeline == null ? 0 : timeline.now();
        stepAndSync();
        if (timeline != null) {
            timeline.span("optimizer", "zero step", "optimizer", ++steps, at, new JsonObject()
                    .put("group", group.name()).put("owned_parameters", byRank.get(group.rank()).size()));
        }
    }

    private void stepAndSync() {
        if (overlap) {
            await(overlappedSteps, "the optimizer steps overlapped with DistributedDataParallel's backward pass");
            if (!steppedInBackward) {
                return;
            }
            steppedInBackward = false;
            copyOptions();
            syncParameters();
            return;
        }
        copyOptions();
        local.step();
        syncParameters();
    }

    /**
     * A DistributedDataParallel communication hook that runs {@code inner} (the all-reduce, say) and then, as each
     * bucket's averaged gradients arrive, steps the parameters of the bucket this rank owns, while later buckets are
     * still being reduced ({@code hook_with_zero_step} of PyTorch's {@code ddp_zero_hook}). The steps run on a
     * virtual thread, one bucket after another; {@link #step()} waits for them and broadcasts the parameters, on the
     * training thread, so the broadcasts can never interleave with DDP's own collectives. Register it with
     * {@code ddp.registerCommHook(zero.hookWithZeroStep(CommHooks.allReduce()))} on a DDP over the same parameters
     * and group. As in PyTorch, the step sees the gradients before anything the training loop does to {@code .grad}
     * after the backward pass (clipping, say), and a learning rate set on {@link #paramGroups()} reaches the step of
     * the backward pass after the next {@link #step()}.
     *
     * @throws IllegalStateException when this optimizer was not built with {@code overlapWithDdp(true)}
     * @throws NullPointerException when {@code inner} is null
     */
    public CommHook hookWithZeroStep(CommHook inner) {
        Objects.requireNonNull(inner, "inner");
        if (!overlap) {
            throw new IllegalStateException("hookWithZeroStep needs a ZeroRedundancyOptimizer built with"
                    + " overlapWithDdp(true)");
        }
        return (ddpGroup, bucket) -> {
            if (ddpGroup != group) {
                throw new IllegalArgumentException("the DistributedDataParallel's group " + ddpGroup
                        + " is not this optimizer's, " + group);
            }
            Future<Tensor> reduced = inner.apply(ddpGroup, bucket);
            steppedInBackward = true;
            Future<Void> previous = overlappedSteps;
            overlappedSteps = previous.compose(v -> reduced)
                    .compose(result -> OffLoop.run("tensorbus-zero-step", () -> stepOwned(bucket, result)));
            return reduced;
        };
    }

    /** Steps the parameters of {@code bucket} this rank owns, with their averaged gradients out of {@code result}. */
    private Void stepOwned(GradBucket bucket, Tensor result) {
        Map<Tensor, Tensor> gradients = new IdentityHashMap<>();
        Tensor flat = result.reshape(-1);
        int at = 0;
        for (Tensor p : bucket.parameters()) {
            int n = p.numel();
            if (owned.contains(p)) {
                Tensor g = flat.narrow(0, at, n).reshape(p.shape());
                gradients.put(p, g.dtype() == p.dtype() ? g : g.to(p.dtype()));
            }
            at += n;
        }
        if (!gradients.isEmpty()) {
            local.step(gradients);
        }
        return null;
    }

    /**
     * The join hook ({@code _ZeROJoinHook}): a joined rank runs {@link #step()} for every iteration the others still
     * train, stepping its shard with the gradients in {@code .grad} and joining the broadcasts. Joined after DDP
     * ({@code Join.of(ddp, zero)}), those are the averaged gradients DDP's join hook brings back, so the shard of a
     * rank that ran out of data keeps being stepped as a plain optimizer would step it.
     */
    @Override
    public JoinHook joinHook() {
        return new JoinHook() {
            @Override
            public void mainHook() {
                stepAndSync();
            }
        };
    }

    /** The group whose broadcasts the join hook joins. */
    @Override
    public ProcessGroup joinProcessGroup() {
        return group;
    }

    /** Zeroes every parameter's gradient in place, owned or not ({@code zero_grad()}). */
    public void zeroGrad() {
        zeroGrad(false);
    }

    /**
     * Clears every parameter's gradient, owned or not.
     *
     * @param setToNull true to drop the gradient tensors, false to zero them in place
     */
    public void zeroGrad(boolean setToNull) {
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            for (Tensor p : all) {
                if (p.grad() != null && setToNull) {
                    p.setGrad(null);
                } else if (p.grad() != null) {
                    p.grad().detachi().zeroi();
                }
            }
        }
    }

    private void copyOptions() {
        for (int g = 0; g < paramGroups.size(); g++) {
            ParamGroup shard = localGroups.get(g);
            paramGroups.get(g).options().forEach(shard::set);
        }
    }

    private void syncParameters() {
        List<Future<Void>> works = new ArrayList<>();
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            for (int r = 0; r < group.size(); r++) {
                List<Tensor> owned = byRank.get(r);
                if (owned.isEmpty()) {
                    continue;
                }
                if (bucketView) {
                    works.add(CoalescedBroadcast.broadcast(group, owned, r));
                } else {
                    for (Tensor p : owned) {
                        works.add(group.broadcast(p.detach(), GroupRank.of(r)));
                    }
                }
            }
        }
        await(Future.all(works), "the broadcast of the updated parameters");
    }

    // ---------------------------------------------------------------- state dict

    /**
     * Gathers every rank's shard of the optimizer state onto global rank {@code to}
     * ({@code consolidate_state_dict(to)}), where {@link #stateDict()} then answers the whole of it. Every member must
     * call it; the state travels with the safe object codec.
     *
     * @throws IllegalArgumentException when {@code to} is not a member of the group
     * @throws io.tensorbus.c10d.CommunicationException when the gather fails or times out
     */
    public void consolidateStateDict(int to) {
        Blocking.checkMayBlock("ZeroRedundancyOptimizer.consolidateStateDict");
        OptimizerState mine = local.stateDict();
        Map<Integer, Map<String, Tensor>> shard = new LinkedHashMap<>();
        mine.state().forEach((localIndex, tensors) -> shard.put(localToGlobal.get(localIndex), tensors));
        List<Object> shards = await(group.gatherObject(shard, to), "the consolidation of the state on rank " + to);
        consolidated = null;
        if (group.rank() == group.groupRank(to)) {
            Map<Integer, Map<String, Tensor>> state = new TreeMap<>();
            for (Object s : shards) {
                ((Map<?, ?>) s).forEach((index, tensors) -> state.put((Integer) index, stateTensors(tensors)));
            }
            for (Map<String, Tensor> tensors : state.values()) {
                // Kept until the next consolidation, past any training step's memory scope.
                tensors.values().forEach(MemoryScope::detach);
            }
            consolidated = new OptimizerState(state, fullGroups());
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Tensor> stateTensors(Object tensors) {
        return (Map<String, Tensor>) tensors;
    }

    private List<Map<String, Object>> fullGroups() {
        List<Map<String, Object>> groups = new ArrayList<>();
        int base = 0;
        for (ParamGroup g : paramGroups) {
            Map<String, Object> options = new LinkedHashMap<>(localGroups.get(groups.size()).options());
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < g.params().size(); i++) {
                ids.add(base + i);
            }
            base += g.params().size();
            options.put(OptimizerState.PARAMS, ids);
            groups.add(options);
        }
        return groups;
    }

    /**
     * The whole optimizer state, as a plain optimizer over all parameters would give it ({@code state_dict()}):
     * only on the rank the last {@link #consolidateStateDict} gathered onto.
     *
     * @throws IllegalStateException on any other rank, or before a consolidation
     */
    public OptimizerState stateDict() {
        if (consolidated == null) {
            throw new IllegalStateException("rank " + globalRank() + " holds no consolidated state: call"
                    + " consolidateStateDict(to) on every rank first, then stateDict() on rank to");
        }
        return consolidated;
    }

    /**
     * Loads a whole optimizer state (from {@link #stateDict()} or a plain optimizer over the same parameters):
     * every rank keeps the shard of the parameters it owns, and every group's options. Needs no communication.
     *
     * @throws IllegalArgumentException when the state does not fit these parameter groups
     */
    public void loadStateDict(OptimizerState state) {
        Objects.requireNonNull(state, "state");
        if (state.paramGroups().size() != paramGroups.size()) {
            throw new IllegalArgumentException("the state dict has " + state.paramGroups().size()
                    + " parameter groups but this optimizer has " + paramGroups.size());
        }
        Map<Integer, Map<String, Tensor>> shard = new LinkedHashMap<>();
        for (int localIndex = 0; localIndex < localToGlobal.size(); localIndex++) {
            Map<String, Tensor> s = state.state().get(globalIndex(state, localToGlobal.get(localIndex)));
            if (s != null) {
                shard.put(localIndex, s);
            }
        }
        List<Map<String, Object>> groups = new ArrayList<>();
        int localIndex = 0;
        for (int g = 0; g < paramGroups.size(); g++) {
            Map<String, Object> options = new LinkedHashMap<>(state.paramGroups().get(g));
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < localGroups.get(g).params().size(); i++) {
                ids.add(localIndex++);
            }
            options.put(OptimizerState.PARAMS, ids);
            groups.add(options);
        }
        local.loadStateDict(new OptimizerState(shard, groups));
        for (int g = 0; g < paramGroups.size(); g++) {
            localGroups.get(g).options().forEach(paramGroups.get(g)::set);
        }
    }

    /**
     * The saved state's index of this optimizer's parameter {@code index}: the saved groups list their
     * parameters' indices in order, as a plain optimizer's state dict does.
     */
    private int globalIndex(OptimizerState state, int index) {
        int base = 0;
        for (int g = 0; g < paramGroups.size(); g++) {
            List<Integer> ids = state.groupParams(g);
            int n = paramGroups.get(g).params().size();
            if (ids.size() != n) {
                throw new IllegalArgumentException("parameter group " + g + " of the state dict has " + ids.size()
                        + " parameters but this optimizer's group " + g + " has " + n);
            }
            if (index < base + n) {
                return ids.get(index - base);
            }
            base += n;
        }
        throw new IllegalArgumentException("parameter " + index + " is in no group");
    }

    private int globalRank() {
        return group.globalRank(group.rank());
    }

    private <T> T await(Future<T> work, String what) {
        Duration deadline = group.timeout().plusSeconds(5);
        return Blocking.await(work, deadline, "ZeroRedundancyOptimizer on rank " + globalRank() + ": " + what);
    }

    @Override
    public String toString() {
        return "ZeroRedundancyOptimizer[rank " + group.rank() + " of " + group.size() + " owns "
                + byRank.get(group.rank()).size() + " of " + all.size() + " parameters, " + local + "]";
    }

    /** Builds a {@link ZeroRedundancyOptimizer}; see {@link ZeroRedundancyOptimizer#builder}. */
    public static final class Builder {
        private final OptimizerSpec spec;
        private ProcessGroup group;
        private boolean bucketView;
        private boolean overlap;

        private Builder(OptimizerSpec spec) {
            this.spec = spec;
        }

        /** The group that shares the state ({@code process_group}); the default group when not set. */
        public Builder group(ProcessGroup group) {
            this.group = Objects.requireNonNull(group, "group");
            return this;
        }

        /**
         * Broadcasts each rank's parameters as one flat buffer per dtype rather than one message per parameter
         * ({@code parameters_as_bucket_view}); the parameters keep their own storage and are copied out of the
         * buffer, where PyTorch makes them views of it.
         */
        public Builder parametersAsBucketView(boolean bucketView) {
            this.bucketView = bucketView;
            return this;
        }

        /**
         * Steps inside DistributedDataParallel's backward pass, bucket by bucket, through the hook of
         * {@link ZeroRedundancyOptimizer#hookWithZeroStep} ({@code overlap_with_ddp}); {@link #step()} then only
         * waits for those steps and broadcasts the parameters. Unlike PyTorch's, whose first two iterations update
         * no parameter (DDP rebuilds its buckets, then the optimizer learns their layout), this one updates them
         * from the first step: DDP's buckets here are fixed when it is built.
         */
        public Builder overlapWithDdp(boolean overlap) {
            this.overlap = overlap;
            return this;
        }

        /**
         * The optimizer over {@code params}, one parameter group with the spec's options.
         *
         * @throws IllegalArgumentException when {@code params} is empty or an option is out of range
         * @throws IllegalStateException when no group was set and there is no default group
         */
        public ZeroRedundancyOptimizer build(List<Tensor> params) {
            Objects.requireNonNull(params, "params");
            return buildGroups(List.of(ParamGroup.of(params)));
        }

        /**
         * The optimizer over {@code groups}; the spec's options fill in what a group does not set.
         *
         * @throws IllegalArgumentException when there is no parameter or an option is unknown or out of range
         * @throws IllegalStateException when no group was set and there is no default group
         */
        public ZeroRedundancyOptimizer buildGroups(List<ParamGroup> groups) {
            Objects.requireNonNull(groups, "groups");
            ProcessGroup g = group != null ? group : Distributed.defaultGroup();
            if (!g.isMember()) {
                throw new IllegalArgumentException("this process is not a member of " + g);
            }
            return new ZeroRedundancyOptimizer(g, spec, groups, bucketView, overlap);
        }
    }
}
