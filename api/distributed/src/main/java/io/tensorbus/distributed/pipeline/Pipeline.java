package io.tensorbus.distributed.pipeline;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.WorkerInfo;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A sequence of stage modules, each on a worker, that a batch streams through in micro-batches: the RPC
 * pipeline of PyTorch's pipeline-parallel ResNet50 tutorial, for any model cut into stages. {@link #forward}
 * splits the batch into {@link #microBatches()} chunks along dimension 0 and sends each through the stages
 * without waiting for the previous one: micro-batch {@code i} enters stage {@code k + 1} as an RRef to its output
 * on stage {@code k} (the next stage fetches it from there), so stages work on different micro-batches at once;
 * the outputs of the last stage are concatenated in order.
 *
 * <p>Called inside a distributed autograd context, every hop is recorded, so one distributed backward pass of a
 * loss on the output reaches every stage (the GPipe schedule: all forwards, then the backward), and a
 * {@code DistributedOptimizer} over {@link #parameterRRefs()} steps all of them. Each stage runs one micro-batch
 * at a time. A layer that computes statistics over its batch (BatchNorm in training mode) sees one micro-batch,
 * as in PyTorch: the result then depends on the micro-batch count; layers that treat samples independently give
 * the same result for every count.
 */
public final class Pipeline implements AutoCloseable {
    private final RpcAgent agent;
    private final List<RRef<Module>> stages;
    private final int microBatches;

    private Pipeline(RpcAgent agent, List<RRef<Module>> stages, int microBatches) {
        this.agent = agent;
        this.stages = List.copyOf(stages);
        this.microBatches = microBatches;
    }

    /**
     * A pipeline over {@code stages}, in order, run by {@code agent}'s worker.
     *
     * @param stages references to the stage modules, each owned by the worker that runs it (made with
     *     {@code agent.remote(worker, factory, ...)}); the pipeline takes them over and closes them
     * @param microBatches how many micro-batches a batch is split into, 1 or more (a batch of fewer samples is
     *     split into as many as it has)
     * @throws IllegalArgumentException when there is no stage, a stage is null or the count is below 1
     */
    public static Pipeline of(RpcAgent agent, List<RRef<Module>> stages, int microBatches) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(stages, "stages");
        if (stages.isEmpty()) {
            throw new IllegalArgumentException("a pipeline needs at least one stage");
        }
        for (int i = 0; i < stages.size(); i++) {
            if (stages.get(i) == null) {
                throw new IllegalArgumentException("stage " + i + " is null");
            }
        }
        if (microBatches < 1) {
            throw new IllegalArgumentException("microBatches must be 1 or more, got " + microBatches);
        }
        return new Pipeline(agent, stages, microBatches);
    }

    /** How many micro-batches a batch is split into. */
    public int microBatches() {
        return microBatches;
    }

    /** The workers of the stages, in stage order. */
    public List<WorkerInfo> workers() {
        return stages.stream().map(RRef::owner).toList();
    }

    /**
     * Streams {@code batch} through the stages in micro-batches; never blocks. Recorded in the distributed
     * autograd context current on this thread, if any.
     *
     * @return the last stage's outputs concatenated along dimension 0; fails naming the stage's worker when one
     *     fails or is lost
     * @throws IllegalArgumentException for a scalar batch
     */
    public Future<Tensor> forwardAsync(Tensor batch) {
        Objects.requireNonNull(batch, "batch");
        if (batch.dim() == 0) {
            throw new IllegalArgumentException("a batch has a first dimension to split; got a scalar");
        }
        List<Tensor> micro = batch.chunk(Math.min(microBatches, Math.max(1, (int) batch.size(0))), 0);
        List<Future<Tensor>> outputs = new ArrayList<>(micro.size());
        List<RRef<Tensor>> hops = new ArrayList<>();
        for (Tensor x : micro) {
            outputs.add(through(x, hops));
        }
        return Future.all(outputs).transform(r -> {
            hops.forEach(RRef::close);
            return r.succeeded() ? Future.succeededFuture(Tensor.cat(outputs.stream().map(Future::result).toList(), 0))
                    : Future.failedFuture(r.cause());
        });
    }

    /**
     * {@link #forwardAsync} waiting for the output, within the agent's timeout.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread
     */
    public Tensor forward(Tensor batch) {
        Blocking.checkMayBlock("Pipeline forward");
        return Blocking.await(forwardAsync(batch), agent.options().timeout(), "a pipeline forward pass");
    }

    /**
     * One micro-batch: the first stage gets the tensor, each next stage an RRef to the previous output, left on
     * the worker that made it until the next one fetched it.
     */
    private Future<Tensor> through(Tensor x, List<RRef<Tensor>> hops) {
        Object input = x;
        int last = stages.size() - 1;
        for (int k = 0; k < last; k++) {
            RRef<Tensor> out = agent.remote(stages.get(k).owner(), agent.options().timeout(), PipelineStages.FORWARD,
                    stages.get(k), input);
            hops.add(out);
            input = out;
        }
        return agent.rpcAsync(stages.get(last).owner(), agent.options().timeout(), PipelineStages.FORWARD,
                stages.get(last), input);
    }

    /**
     * RRefs to every stage's parameters, stage by stage, each owned by its stage's worker: what a
     * {@code DistributedOptimizer} takes. Close them when done.
     */
    public List<RRef<Tensor>> parameterRRefs() {
        List<Future<List<RRef<Tensor>>>> each = new ArrayList<>();
        for (RRef<Module> s : stages) {
            each.add(agent.rpcAsync(s.owner(), agent.options().timeout(), PipelineStages.PARAMETERS, s));
        }
        Blocking.await(Future.all(each), agent.options().timeout(), "listing the pipeline's parameters");
        List<RRef<Tensor>> all = new ArrayList<>();
        each.forEach(f -> all.addAll(f.result()));
        return all;
    }

    /** Releases the stages (their workers drop them once no other reference is left). */
    @Override
    public void close() {
        stages.forEach(RRef::close);
    }
}
