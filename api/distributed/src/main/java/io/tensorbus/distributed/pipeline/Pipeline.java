package io.tensorbus.distributed.pipeline;

import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.WorkerInfo;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A sequence of stage modules, each on a worker, that a batch streams through in micro-batches: the RPC
 * pipeline of PyTorch's pipeline-parallel ResNet50 tutorial, for any model cut into stages. {@link #forward}
 * splits the batch into {@link #microBatches()} chunks along dimension 0 and sends each through the stages
 * without waiting for the previous one: micro-batch {@code i} enters stage {@code k + 1} as an RRef to its output
 * on stage {@code k} (the next stage fetches it from there), so stages work on different micro-batches at once;
 * the outputs of the last stage are concatenated in order.
 *
 * <p>Called inside a distributed autograd context, every hop is recorded, so one distributed backward pass of a
 * loss on the output reaches every stage, and a {@code DistributedOptimizer} over {@link #parameterRRefs()}
 * steps all of them. {@link #trainStep} does a whole step under the pipeline's {@link Schedule}. Each stage runs
 * one micro-batch at a time. A layer that computes statistics over its batch (BatchNorm in training mode) sees
 * one micro-batch, as in PyTorch: the result then depends on the micro-batch count, and its running statistics
 * are updated once per micro-batch. Layers that treat samples independently give the same result for every
 * count; for an exact comparison put BatchNorm in eval mode or leave it out.
 */
public final class Pipeline implements AutoCloseable {
    /** How a training step orders the micro-batches' forward and backward passes. */
    public enum Schedule {
        /**
         * GPipe, the seed's: every micro-batch's forward pass, then one backward pass of the loss of the whole
         * batch. Every stage keeps the activations of all micro-batches until the backward pass.
         */
        GPIPE,
        /**
         * One forward, one backward: at most as many micro-batches in flight as there are stages, and each
         * micro-batch's backward pass (of its share of the loss) starts as soon as its output is back, while the
         * next ones go forward; a stage keeps the activations of at most that many micro-batches. The backward
         * passes run in {@link DistAutograd.Mode#SMART} mode, which leaves out the later micro-batches'
         * recorded sends that FAST mode would wait for.
         */
        ONE_F_ONE_B
    }

    /** A loss that averages over the samples of its batch (PyTorch's {@code reduction="mean"}). */
    @FunctionalInterface
    public interface Loss {
        /** The mean loss of {@code output} against {@code target}: a scalar. */
        Tensor apply(Tensor output, Tensor target);
    }

    private final RpcAgent agent;
    private final List<RRef<Module>> stages;
    private final int microBatches;
    private final Schedule schedule;
    /** The number of the next micro-batch, over the pipeline's life. */
    private final AtomicLong tickets = new AtomicLong();
    private final PipelineBubbles bubbles;

    private Pipeline(RpcAgent agent, List<RRef<Module>> stages, int microBatches, Schedule schedule) {
        this.agent = agent;
        this.stages = List.copyOf(stages);
        this.microBatches = microBatches;
        this.schedule = schedule;
        this.bubbles = new PipelineBubbles(agent, this.stages);
    }

    /**
     * A pipeline under the {@link Schedule#GPIPE} schedule: {@link #of(RpcAgent, List, int, Schedule)}.
     *
     * @throws IllegalArgumentException when there is no stage, a stage is null or the count is below 1
     */
    public static Pipeline of(RpcAgent agent, List<RRef<Module>> stages, int microBatches) {
        return of(agent, stages, microBatches, Schedule.GPIPE);
    }

    /**
     * A pipeline over {@code stages}, in order, run by {@code agent}'s worker.
     *
     * @param stages references to the stage modules, each owned by the worker that runs it (made with
     *     {@code agent.remote(worker, factory, ...)}); the pipeline takes them over and closes them
     * @param microBatches how many micro-batches a batch is split into, 1 or more (a batch of fewer samples is
     *     split into as many as it has)
     * @param schedule how {@link #trainStep} orders forward and backward passes
     * @throws IllegalArgumentException when there is no stage, a stage is null or the count is below 1
     */
    public static Pipeline of(RpcAgent agent, List<RRef<Module>> stages, int microBatches, Schedule schedule) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(schedule, "schedule");
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
        return new Pipeline(agent, stages, microBatches, schedule);
    }

    /** How many micro-batches a batch is split into. */
    public int microBatches() {
        return microBatches;
    }

    /** How {@link #trainStep} orders forward and backward passes. */
    public Schedule schedule() {
        return schedule;
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
        return bubbles.measure(() -> stream(batch));
    }

    private Future<Tensor> stream(Tensor batch) {
        List<Flight> flights = split(batch).stream().map(this::through).toList();
        List<Future<Tensor>> outputs = flights.stream().map(Flight::output).toList();
        return Future.all(outputs).transform(r -> {
            flights.forEach(Flight::land);
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
     * One training step inside a new distributed autograd context: the forward and backward passes of
     * {@code batch} under the pipeline's {@link Schedule}, then {@code optimizer}'s step with the context's
     * gradients. Both schedules give the gradients of {@code loss} over the whole batch (a mean over its samples),
     * the same as one process would.
     *
     * @param target the targets, split along dimension 0 as {@code batch} is
     * @return the loss over the whole batch, detached
     * @throws IllegalArgumentException when {@code batch} and {@code target} differ in their first dimension
     * @throws IllegalStateException on a Vert.x event-loop thread
     */
    public Tensor trainStep(Tensor batch, Tensor target, Loss loss, DistributedOptimizer optimizer) {
        Objects.requireNonNull(batch, "batch");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(loss, "loss");
        Objects.requireNonNull(optimizer, "optimizer");
        Blocking.checkMayBlock("Pipeline trainStep");
        if (batch.dim() == 0 || target.dim() == 0 || batch.size(0) != target.size(0)) {
            throw new IllegalArgumentException("batch and target must have the same first dimension, got "
                    + Arrays.toString(batch.shape()) + " and " + Arrays.toString(target.shape()));
        }
        DistAutograd dist = agent.distAutograd();
        try (DistAutograd.Context context = dist.context()) {
            Tensor total = schedule == Schedule.GPIPE ? gpipe(dist, context.id(), batch, target, loss)
                    : oneForwardOneBackward(dist, context.id(), batch, target, loss);
            optimizer.step(context.id());
            return total;
        }
    }

    private Tensor gpipe(DistAutograd dist, long contextId, Tensor batch, Tensor target, Loss loss) {
        Tensor l = loss.apply(forward(batch), target);
        dist.backward(contextId, List.of(l));
        return l.detach();
    }

    /**
     * Keeps one micro-batch in flight per stage; as the oldest comes back, runs the backward pass of its share of
     * the loss (its samples' fraction of the batch) and sends the next one on.
     */
    private Tensor oneForwardOneBackward(DistAutograd dist, long contextId, Tensor batch, Tensor target, Loss loss) {
        List<Tensor> inputs = split(batch);
        List<Tensor> targets = target.chunk(inputs.size(), 0);
        double samples = batch.size(0);
        Deque<Flight> inFlight = new ArrayDeque<>();
        double total = 0;
        int next = 0;
        for (int done = 0; done < inputs.size(); done++) {
            while (next < inputs.size() && inFlight.size() < stages.size()) {
                inFlight.add(through(inputs.get(next++)));
            }
            Flight oldest = inFlight.poll();
            Tensor out;
            try {
                out = Blocking.await(oldest.output(), agent.options().timeout(), "a pipeline forward pass");
            } finally {
                oldest.land();
            }
            Tensor share = loss.apply(out, targets.get(done)).mul(targets.get(done).size(0) / samples);
            dist.backward(contextId, List.of(share), false, DistAutograd.Mode.SMART);
            total += share.item();
        }
        return Tensor.scalar(total);
    }

    private List<Tensor> split(Tensor batch) {
        return batch.chunk(Math.min(microBatches, Math.max(1, (int) batch.size(0))), 0);
    }

    /** A micro-batch on its way: the last stage's output, and the RRefs of the hops between stages. */
    private record Flight(Future<Tensor> output, List<RRef<Tensor>> hops) {
        /** Its output is back (or failed): the intermediate outputs may go. */
        void land() {
            hops.forEach(RRef::close);
        }
    }

    /**
     * One micro-batch: the first stage gets the tensor, each next stage an RRef to the previous output, left on
     * the worker that made it until the next one fetched it.
     */
    private Flight through(Tensor x) {
        // Every stage runs the micro-batches in this order (StageTurns).
        long ticket = tickets.getAndIncrement();
        Object input = x;
        List<RRef<Tensor>> hops = new ArrayList<>();
        int last = stages.size() - 1;
        for (int k = 0; k < last; k++) {
            RRef<Tensor> out = agent.remote(stages.get(k).owner(), agent.options().timeout(), PipelineStages.FORWARD,
                    stages.get(k), input, ticket);
            hops.add(out);
            input = out;
        }
        return new Flight(agent.rpcAsync(stages.get(last).owner(), agent.options().timeout(), PipelineStages.FORWARD,
                stages.get(last), input, ticket), hops);
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

    /**
     * Releases the stages: each stage's worker closes its own handles of the parameter RRefs it gave out, and the
     * stages' references are closed once it has (or could not be told); never blocks. The workers drop the
     * stages once no other reference is left; a graceful RPC shutdown waits for these calls.
     */
    @Override
    public void close() {
        for (RRef<Module> s : stages) {
            agent.rpcAsync(s.owner(), agent.options().timeout(), PipelineStages.RELEASE, s).onComplete(r -> s.close());
        }
    }
}
