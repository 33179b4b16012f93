package io.tensorbus.distributed.optim;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.WorkerInfo;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.optim.OptimizerState;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code torch.distributed.optim.DistributedOptimizer}: optimizes parameters that live on several workers, given
 * as RRefs. It makes one local optimizer on each worker that owns some of them ({@link OptimizerSpec} says which
 * and with what options), and {@link #step(long)} steps them all at once with the gradients a distributed autograd
 * context accumulated on each owner; a parameter without a gradient there is skipped. Steps on one worker are
 * serialised, so two distributed optimizers over the same parameters never interleave their updates.
 *
 * <pre>{@code
 * DistributedOptimizer opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(0.05), List.of(rref1, rref2));
 * try (DistAutograd.Context context = agent.distAutograd().context()) {
 *     ... forward, agent.distAutograd().backward(context.id(), List.of(loss)) ...
 *     opt.step(context.id());
 * }
 * }</pre>
 *
 * Thread-safe. {@link #close} releases the local optimizers.
 */
public final class DistributedOptimizer implements AutoCloseable {
    private final RpcAgent agent;
    /** The steps this optimizer took, numbering their spans on the timeline. */
    private final AtomicLong stepCount = new AtomicLong();
    private final List<RRef<Object>> locals;

    private DistributedOptimizer(RpcAgent agent, List<RRef<Object>> locals) {
        this.agent = agent;
        this.locals = locals;
    }

    /**
     * Makes the local optimizers on the owners of {@code params}; never blocks.
     *
     * @return the optimizer once every owner has made its local one; a failed future naming the owner when one
     *     could not (an unknown option, say)
     * @throws IllegalArgumentException when {@code params} is empty or holds null
     * @throws NullPointerException when an argument is null
     */
    public static Future<DistributedOptimizer> createAsync(RpcAgent agent, OptimizerSpec spec,
                                                           List<RRef<Tensor>> params) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(spec, "spec");
        Map<WorkerInfo, List<RRef<Tensor>>> byOwner = byOwner(params);
        List<Future<RRef<Object>>> made = new ArrayList<>();
        byOwner.forEach((owner, owned) -> made.add(agent.<RRef<Object>>rpcAsync(owner, agent.options().timeout(),
                LocalOptimizers.NEW, spec.optimizer(), spec.options(), owned)));
        return Future.all(made).map(all -> new DistributedOptimizer(agent, made.stream().map(Future::result).toList()));
    }

    /**
     * {@link #createAsync} waiting for the owners, within the agent's timeout.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread
     * @throws RuntimeException the failure of {@link #createAsync}
     */
    public static DistributedOptimizer create(RpcAgent agent, OptimizerSpec spec, List<RRef<Tensor>> params) {
        return Blocking.await(createAsync(agent, spec, params), agent.options().timeout(),
                "making the local optimizers of a DistributedOptimizer");
    }

    /**
     * {@code step(context_id)}: steps every owner's local optimizer with the gradients of context
     * {@code contextId} on that owner, all at once; never blocks.
     *
     * @return completes when every owner has stepped; fails naming the owner that could not (a context unknown
     *     there, say)
     */
    public Future<Void> stepAsync(long contextId) {
        long at = TimelineRecorder.now(agent.self().id());
        List<Future<Object>> steps = new ArrayList<>();
        for (RRef<Object> local : locals) {
            steps.add(stepOnOwner(local, contextId));
        }
        return onTimeline(at, contextId, Future.all(steps).mapEmpty());
    }

    /** {@code step}, begun at {@code at} (0: no timeline), as a span on this worker's timeline. */
    private Future<Void> onTimeline(long at, long contextId, Future<Void> step) {
        return TimelineRecorder.spanWhenDone(agent.self().id(), at, "optimizer", "step", "optimizer",
                stepCount.incrementAndGet(), new JsonObject().put("context", contextId).put("owners", locals.size()),
                step);
    }

    /**
     * {@link #stepAsync} waiting for every owner, within the agent's timeout. The local optimizer of this worker,
     * if any, steps on this thread while the others step on theirs.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread
     * @throws IllegalArgumentException when this worker holds parameters but no context {@code contextId}
     */
    public void step(long contextId) {
        Blocking.checkMayBlock("DistributedOptimizer step");
        List<Future<Object>> steps = new ArrayList<>();
        LocalOptimizer here = null;
        for (RRef<Object> local : locals) {
            if (local.isOwner()) {
                here = (LocalOptimizer) local.localValue();
            } else {
                steps.add(stepOnOwner(local, contextId));
            }
        }
        long at = TimelineRecorder.now(agent.self().id());
        if (here != null) {
            here.step(agent.distAutograd().getGradients(contextId));
        }
        Blocking.await(onTimeline(at, contextId, Future.all(steps).mapEmpty()), agent.options().timeout(),
                "DistributedOptimizer step");
    }

    /** Steps the local optimizer {@code local} on its owner, over RPC. */
    private Future<Object> stepOnOwner(RRef<Object> local, long contextId) {
        return agent.rpcAsync(local.owner(), agent.options().timeout(), LocalOptimizers.STEP, local, contextId);
    }

    /** The workers that hold a local optimizer, in the order of {@link #stateDict()}. */
    public List<WorkerInfo> owners() {
        return locals.stream().map(RRef::owner).toList();
    }

    /**
     * The state of every local optimizer, by owner, for a checkpoint; never blocks.
     *
     * @return each owner's {@code state_dict()}, in {@link #owners()} order
     */
    @SuppressWarnings("unchecked")
    public Future<Map<WorkerInfo, OptimizerState>> stateDictAsync() {
        List<Future<List<Object>>> states = new ArrayList<>();
        for (RRef<Object> local : locals) {
            states.add(agent.rpcAsync(local.owner(), agent.options().timeout(), LocalOptimizers.STATE, local));
        }
        return Future.all(states).map(all -> {
            Map<WorkerInfo, OptimizerState> out = new LinkedHashMap<>();
            for (int i = 0; i < locals.size(); i++) {
                List<Object> s = states.get(i).result();
                out.put(locals.get(i).owner(), OptimizerState.fromFlat((Map<String, Tensor>) s.get(0),
                        (List<Map<String, Object>>) s.get(1)));
            }
            return out;
        });
    }

    /** {@link #stateDictAsync} waiting for every owner. */
    public Map<WorkerInfo, OptimizerState> stateDict() {
        return Blocking.await(stateDictAsync(), agent.options().timeout(), "DistributedOptimizer stateDict");
    }

    /**
     * Replaces each owner's optimizer state with the one {@code states} holds for it (as {@link #stateDict} gave);
     * never blocks.
     *
     * @throws IllegalArgumentException when {@code states} lacks an owner
     */
    public Future<Void> loadStateDictAsync(Map<WorkerInfo, OptimizerState> states) {
        List<Future<Object>> loads = new ArrayList<>();
        for (RRef<Object> local : locals) {
            OptimizerState s = states.get(local.owner());
            if (s == null) {
                throw new IllegalArgumentException("no optimizer state for " + local.owner() + " (the states are for "
                        + states.keySet() + ")");
            }
            loads.add(agent.rpcAsync(local.owner(), agent.options().timeout(), LocalOptimizers.LOAD, local,
                    s.toTensorMap(), s.paramGroups()));
        }
        return Future.all(loads).mapEmpty();
    }

    /**
     * Releases the local optimizers: each owner is told to free its own handle and this optimizer's references
     * are closed once it has (or could not be told); never blocks. A graceful RPC shutdown waits for these calls.
     */
    @Override
    public void close() {
        for (RRef<Object> local : locals) {
            agent.rpcAsync(local.owner(), agent.options().timeout(), LocalOptimizers.FREE, local)
                    .onComplete(r -> local.close());
        }
    }

    private static Map<WorkerInfo, List<RRef<Tensor>>> byOwner(List<RRef<Tensor>> params) {
        Objects.requireNonNull(params, "params");
        if (params.isEmpty()) {
            throw new IllegalArgumentException("a DistributedOptimizer needs at least one parameter RRef");
        }
        Map<WorkerInfo, List<RRef<Tensor>>> byOwner = new LinkedHashMap<>();
        for (int i = 0; i < params.size(); i++) {
            RRef<Tensor> p = params.get(i);
            if (p == null) {
                throw new IllegalArgumentException("parameter RRef " + i + " is null");
            }
            byOwner.computeIfAbsent(p.owner(), o -> new ArrayList<>()).add(p);
        }
        return byOwner;
    }
}
