package io.tensorbus.parallel;

import io.tensorbus.DType;
import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Edge;
import io.tensorbus.internal.autograd.Engine;
import io.tensorbus.autograd.Node;
import io.tensorbus.autograd.RemovableHandle;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.algorithms.CommHook;
import io.tensorbus.distributed.algorithms.CommHooks;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The gradient reducer of DistributedDataParallel (PyTorch's {@code c10d::Reducer}). A post-hook on every
 * parameter's {@link AccumulateGrad} node copies the fresh gradient into its {@link Bucket}; the moment a
 * bucket's last gradient is in, and every earlier bucket has been launched, its {@link CommHook} starts,
 * so communication overlaps the rest of the backward pass. A callback queued on the autograd engine waits
 * for all buckets once the pass is done and writes the averaged gradients to {@code .grad}.
 *
 * <p>All of it runs on the thread that runs the backward pass. The communication futures complete on the
 * group's event loop; a hook's own continuations (the compression hooks' copy back into the bucket) run
 * there too, and are complete before the future is, so the backward thread reads a finished bucket.
 */
final class Reducer {
    private final ProcessGroup group;
    private final List<Tensor> params;
    private final List<String> names;
    private final List<Bucket> buckets = new ArrayList<>();
    private final int[] bucketOf;
    private final int[] slotOf;
    private final boolean gradientAsBucketView;
    private final boolean findUnused;
    private final boolean staticGraph;
    private final List<RemovableHandle> handles = new ArrayList<>();
    private CommHook hook = CommHooks.allReduce();
    private boolean customHook;

    private boolean expectHooks;
    private boolean requireFinalize;
    private final boolean[] ready;
    private final boolean[] usedLocally;
    private final int[] hookCalls;
    private int[] staticHookCalls;
    private int nextBucket;
    private List<Integer> unused = List.of();
    private boolean unusedMarked;
    private boolean delayAllReduce;
    private Tensor usedMap;
    private Future<Void> usedMapWork;
    private final StepMeters meters;
    /** When this step's forward began ({@link #stepStart()}; 0 when nothing measures it). */
    private long stepBegin;
    private long completedIterations;
    private RuntimeException failure;
    private Duration exposed = Duration.ZERO;

    Reducer(ProcessGroup group, List<Tensor> params, List<String> names, long firstCapBytes, long capBytes,
            boolean gradientAsBucketView, boolean findUnused, boolean staticGraph) {
        this.group = group;
        this.meters = new StepMeters(group);
        this.params = List.copyOf(params);
        this.names = List.copyOf(names);
        this.gradientAsBucketView = gradientAsBucketView;
        this.findUnused = findUnused;
        this.staticGraph = staticGraph;
        this.bucketOf = new int[params.size()];
        this.slotOf = new int[params.size()];
        this.ready = new boolean[params.size()];
        this.usedLocally = new boolean[params.size()];
        this.hookCalls = new int[params.size()];
        for (int[] indices : Bucket.assign(this.params, firstCapBytes, capBytes)) {
            Bucket b = new Bucket(buckets.size(), indices, this.params);
            for (int s = 0; s < indices.length; s++) {
                bucketOf[indices[s]] = b.index;
                slotOf[indices[s]] = s;
            }
            buckets.add(b);
        }
        if (gradientAsBucketView) {
            pointGradientsAtBuckets();
        }
        for (int i = 0; i < this.params.size(); i++) {
            int index = i;
            handles.add(TensorInternals.gradAccumulator(this.params.get(i))
                    .registerPostHook((in, out) -> autogradHook(index)));
        }
    }

    /** The parameter names of each bucket, in reduction order. */
    List<List<String>> bucketNames() {
        List<List<String>> out = new ArrayList<>();
        for (Bucket b : buckets) {
            out.add(Arrays.stream(b.params).mapToObj(names::get).toList());
        }
        return List.copyOf(out);
    }

    /** How many buckets there are. */
    int bucketCount() {
        return buckets.size();
    }

    /** Detaches the gradient hooks: later backward passes only accumulate locally. */
    void removeHooks() {
        handles.forEach(RemovableHandle::remove);
        handles.clear();
        expectHooks = false;
    }

    /** Replaces the default all-reduce; allowed once, before the first backward pass (as PyTorch). */
    void registerCommHook(CommHook commHook) {
        if (customHook) {
            throw new IllegalStateException("a communication hook is already registered; register_comm_hook may only"
                    + " be called once");
        }
        if (completedIterations > 0 || expectHooks) {
            throw new IllegalStateException("register the communication hook before the first backward pass");
        }
        this.hook = commHook;
        this.customHook = true;
    }

    /** How long the last synchronised backward pass waited for communication after its last gradient. */
    Duration lastExposedCommunication() {
        return exposed;
    }

    /**
     * Called by the forward pass before an iteration whose backward must synchronise: fails when the previous
     * one did not finish, then arms the hooks. With unused-parameter detection, walks the graph from
     * {@code output} to find the parameters that will get no gradient.
     */
    /** The start of a step's forward, for its meters and timeline ({@code 0}: neither is on). */
    long stepStart() {
        return meters.begin();
    }

    void prepareForBackward(Tensor output, long forwardBegin) {
        checkPriorReductionFinished();
        stepBegin = forwardBegin;
        Arrays.fill(ready, false);
        Arrays.fill(hookCalls, 0);
        buckets.forEach(Bucket::reset);
        nextBucket = 0;
        unusedMarked = false;
        usedMap = null;
        usedMapWork = null;
        delayAllReduce = staticGraph && staticHookCalls == null;
        unused = findUnused && !staticGraph ? unusedFrom(output) : staticUnused();
        expectHooks = true;
    }

    /**
     * Throws PyTorch's error when the previous synchronised iteration started reducing (some gradient
     * arrived) but never finished. A forward that no backward followed, or a backward that failed before any
     * gradient arrived, is forgotten, as in PyTorch.
     */
    void checkPriorReductionFinished() {
        if (failure != null) {
            throw new IllegalStateException("DistributedDataParallel on rank " + group.rank() + " cannot continue: the"
                    + " gradient reduction of an earlier iteration failed: " + failure.getMessage(), failure);
        }
        if (!requireFinalize) {
            return;
        }
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < params.size(); i++) {
            if (!ready[i]) {
                missing.add(names.get(i) + " (index " + i + ")");
            }
        }
        throw new IllegalStateException("DistributedDataParallel on rank " + group.rank() + ": expected to have "
                + "finished reduction in the prior iteration before starting a new one. This means the module has "
                + "parameters that were not used in producing the loss. Build the wrapper with "
                + "findUnusedParameters(true), or make sure every parameter takes part in the loss. Parameters "
                + "that did not receive a gradient on rank " + group.rank() + ": " + String.join(", ", missing));
    }

    private void autogradHook(int index) {
        // Used once inside noSync counts as used in the next synchronised iteration (PyTorch's local_used_map).
        usedLocally[index] = true;
        if (!expectHooks) {
            return;
        }
        hookCalls[index]++;
        requireFinalize = true;
        if (delayAllReduce) {
            if (!unusedMarked) {
                unusedMarked = true;
                Engine.queueCallback(this::finalizeBackward);
            }
            return;
        }
        if (!unusedMarked) {
            unusedMarked = true;
            for (int u : unused) {
                markReady(u);
            }
        }
        if (staticHookCalls != null && hookCalls[index] < staticHookCalls[index]) {
            return;
        }
        markReady(index);
    }

    private void markReady(int index) {
        if (ready[index]) {
            throw new IllegalStateException("DistributedDataParallel on rank " + group.rank() + ": parameter "
                    + names.get(index) + " was marked ready twice in one iteration; its gradient arrived again after"
                    + " it was reduced (a reentrant backward, as activation checkpointing runs). staticGraph(true)"
                    + " supports a fixed number of such arrivals per backward pass");
        }
        ready[index] = true;
        copyIntoBucket(index);
        Bucket b = buckets.get(bucketOf[index]);
        if (--b.pending == 0) {
            launchReadyBuckets();
        }
    }

    private void copyIntoBucket(int index) {
        Tensor p = params.get(index);
        Tensor view = buckets.get(bucketOf[index]).views[slotOf[index]];
        Tensor g = p.grad();
        try (var ignored = Autograd.noGrad()) {
            if (g == null) {
                view.zeroi();
            } else if (g != view) {
                view.copyi(g);
                if (gradientAsBucketView) {
                    p.setGrad(view);
                }
            }
        }
    }

    private void launchReadyBuckets() {
        while (nextBucket < buckets.size() && buckets.get(nextBucket).pending == 0) {
            launch(buckets.get(nextBucket++));
        }
        if (nextBucket == buckets.size()) {
            launchUsedMap();
            if (!delayAllReduce) {
                Engine.queueCallback(this::finalizeBackward);
            }
        }
    }

    private void launch(Bucket b) {
        try {
            b.work = hook.apply(group, b.toGradBucket(params, b.index == buckets.size() - 1));
            if (b.work == null) {
                b.work = Future.failedFuture(new IllegalStateException("the communication hook returned null"));
            }
        } catch (RuntimeException e) {
            b.work = Future.failedFuture(e);
        }
        meters.launched(b);
    }

    /** With unused-parameter detection, the per-parameter "used on this rank" flags are summed over ranks. */
    private void launchUsedMap() {
        if (!findUnused && !staticGraph) {
            return;
        }
        int[] flags = new int[params.size()];
        for (int i = 0; i < flags.length; i++) {
            flags[i] = usedLocally[i] ? 1 : 0;
        }
        usedMap = Tensor.of(flags, flags.length).to(params.get(0).device());
        usedMapWork = group.allReduce(usedMap, ReduceOp.SUM);
    }

    private void finalizeBackward() {
        long start = System.nanoTime();
        try {
            if (delayAllReduce) {
                delayedAllReduce();
            }
            for (Bucket b : buckets) {
                takeResult(b, await(b.work, "bucket " + b.index));
            }
            if (usedMapWork != null) {
                await(usedMapWork, "the used-parameter map");
            }
            writeGradients();
            if (staticGraph && staticHookCalls == null) {
                staticHookCalls = hookCalls.clone();
            }
            completedIterations++;
            meters.ended(stepBegin, start, buckets, null);
        } catch (RuntimeException e) {
            failure = e;
            meters.ended(stepBegin, start, buckets, e);
            throw e;
        } finally {
            expectHooks = false;
            requireFinalize = false;
            Arrays.fill(usedLocally, false);
            exposed = Duration.ofNanos(System.nanoTime() - start);
        }
    }

    /** The static graph's first iteration: every gradient is reduced at the end, then the counts are known. */
    private void delayedAllReduce() {
        delayAllReduce = false;
        for (int i = 0; i < params.size(); i++) {
            copyIntoBucket(i);
            ready[i] = true;
        }
        buckets.forEach(b -> b.pending = 0);
        while (nextBucket < buckets.size()) {
            launch(buckets.get(nextBucket++));
        }
        launchUsedMap();
    }

    private <T> T await(Future<T> work, String what) {
        return Blocking.await(work, group.timeout().plusSeconds(5), "DistributedDataParallel on rank "
                + group.rank() + ": the gradient reduction of " + what);
    }

    private void takeResult(Bucket b, Tensor result) {
        if (result == b.buffer) {
            return;
        }
        if (result == null || result.numel() != b.buffer.numel()) {
            throw new IllegalStateException("the communication hook returned " + (result == null ? "null"
                    : result.numel() + " elements") + " for bucket " + b.index + ", which has " + b.buffer.numel());
        }
        try (var ignored = Autograd.noGrad()) {
            b.buffer.copyi(result.reshape(-1));
        }
    }

    private void writeGradients() {
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < params.size(); i++) {
                if (usedMap != null && usedMap.getLong(i) == 0) {
                    continue;  // globally unused: PyTorch leaves such a gradient untouched
                }
                Tensor p = params.get(i);
                Tensor view = buckets.get(bucketOf[i]).views[slotOf[i]];
                if (gradientAsBucketView) {
                    if (p.grad() != view) {
                        p.setGrad(view);
                    }
                } else if (p.grad() == null) {
                    p.setGrad(view.clone());
                } else {
                    p.grad().copyi(view);
                }
            }
        }
    }

    /**
     * A joined rank's part of one iteration of the ranks still training: the same collectives in the same
     * order, with zero gradients; the averaged gradients they bring back are written to {@code .grad}. Blocks
     * until they finish.
     */
    void shadowBackward() {
        List<Future<Tensor>> works = new ArrayList<>();
        for (Bucket b : buckets) {
            try (var ignored = Autograd.noGrad()) {
                b.buffer.zeroi();
            }
            b.work = null;
            launch(b);
            works.add(b.work);
        }
        Future<Void> used = null;
        Tensor usedFlags = null;
        if (findUnused || staticGraph) {
            usedFlags = Tensor.zeros(params.get(0).device(), DType.INT32, params.size());
            used = group.allReduce(usedFlags, ReduceOp.SUM);
        }
        for (int i = 0; i < works.size(); i++) {
            takeResult(buckets.get(i), await(works.get(i), "bucket " + i + " (joined rank)"));
        }
        if (used != null) {
            await(used, "the used-parameter map (joined rank)");
        }
        // The training ranks' averaged gradients, so that an optimizer stepping on this rank sees them too.
        usedMap = usedFlags;
        writeGradients();
    }

    /** Gradients that exist become views of their buckets; missing ones stay null until one arrives. */
    private void pointGradientsAtBuckets() {
        try (var ignored = Autograd.noGrad()) {
            for (int i = 0; i < params.size(); i++) {
                Tensor g = params.get(i).grad();
                if (g != null) {
                    Tensor view = buckets.get(bucketOf[i]).views[slotOf[i]];
                    view.copyi(g);
                    params.get(i).setGrad(view);
                }
            }
        }
    }

    private List<Integer> staticUnused() {
        if (staticHookCalls == null) {
            return List.of();
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < staticHookCalls.length; i++) {
            if (staticHookCalls[i] == 0) {
                out.add(i);
            }
        }
        return out;
    }

    /** Parameters whose accumulator the graph of {@code output} does not reach. */
    private List<Integer> unusedFrom(Tensor output) {
        Set<Node> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Node> stack = new ArrayDeque<>();
        if (output != null && output.gradFn() != null) {
            stack.push(output.gradFn());
            seen.add(output.gradFn());
        }
        Set<Tensor> reached = Collections.newSetFromMap(new IdentityHashMap<>());
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            if (n instanceof AccumulateGrad acc) {
                reached.add(acc.variable());
            }
            for (Edge e : n.nextEdges()) {
                if (e != null && seen.add(e.node())) {
                    stack.push(e.node());
                }
            }
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < params.size(); i++) {
            if (!reached.contains(params.get(i))) {
                out.add(i);
            }
        }
        return out;
    }
}
