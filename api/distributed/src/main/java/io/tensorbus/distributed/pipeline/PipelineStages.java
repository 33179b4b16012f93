package io.tensorbus.distributed.pipeline;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcFunctionLibrary;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.nn.Module;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The functions a {@link Pipeline} calls on the workers that hold its stages, registered in every
 * {@link RpcRegistry} through {@link java.util.ServiceLoader}: run a stage's forward pass on a micro-batch (the
 * input comes as a tensor or as an RRef to the previous stage's output, fetched here), list a stage's
 * parameters as RRefs, and release this worker's own handles of those. Calls of the pipeline are made inside the
 * caller's distributed autograd context, so they are recorded and the backward pass reaches every stage.
 */
public final class PipelineStages implements RpcFunctionLibrary {
    /** {@code [RRef<Module> stage, Tensor | RRef<Tensor> input]} to the stage's output. */
    static final String FORWARD = "pipeline.forward";
    /** The timer of the time a stage computes ({@link io.tensorbus.distributed.metrics.TensorbusMetrics}). */
    static final String BUSY_METER = Meters.PREFIX + "pipeline.stage.busy";
    private static final Map<Integer, Meters.Operation> BUSY = new ConcurrentHashMap<>();
    /** {@code [RRef<Module> stage]} to {@code List<RRef<Tensor>>}, the stage's parameters, owned by its worker. */
    static final String PARAMETERS = "pipeline.parameters";
    /** {@code [RRef<Module> stage]}: closes this worker's own handles of the stage's parameter RRefs. */
    static final String RELEASE = "pipeline.release";
    /** {@code [RRef<Module> stage]} to the nanoseconds the stage has computed forward passes, all together. */
    static final String COMPUTED = "pipeline.computed";

    /**
     * The handles {@code RRef.of} opened for each stage's parameters, by identity of the stage: the same ones go
     * to every caller, and {@value #RELEASE} closes them, so that nothing waits for the garbage collector.
     */
    private final Map<Module, List<RRef<Tensor>>> parameterHandles = new ConcurrentHashMap<>();

    /** Each stage's micro-batch order, by identity of the stage. */
    private static final Map<Module, StageTurns> TURNS = new ConcurrentHashMap<>();
    /** Each stage's forward computing time so far, in nanoseconds, by identity of the stage. */
    private static final Map<Module, AtomicLong> COMPUTED_NANOS = new ConcurrentHashMap<>();

    /** Made by {@link java.util.ServiceLoader}. */
    public PipelineStages() {
    }

    @Override
    public void registerInto(RpcRegistry registry) {
        registry.register(FORWARD, PipelineStages::forward).register(COMPUTED, args -> {
            check(args, 1);
            AtomicLong nanos = COMPUTED_NANOS.get(stage(args.get(0)));
            return nanos == null ? 0L : nanos.get();
        }).register(PARAMETERS, args -> {
            check(args, 1);
            RpcAgent agent = RpcAgent.current();
            return List.copyOf(parameterHandles.computeIfAbsent(stage(args.get(0)), s -> {
                List<RRef<Tensor>> refs = new ArrayList<>();
                s.parameters().forEach(p -> refs.add(RRef.of(agent, p)));
                return refs;
            }));
        }).register(RELEASE, args -> {
            check(args, 1);
            Module stage = stage(args.get(0));
            TURNS.remove(stage);
            COMPUTED_NANOS.remove(stage);
            List<RRef<Tensor>> handles = parameterHandles.remove(stage);
            if (handles != null) {
                handles.forEach(RRef::close);
            }
            return null;
        });
    }

    /**
     * Runs the stage on the input; one micro-batch at a time per stage (the seed's lock), in the order the driver
     * numbered them ({@code args: stage, input, micro-batch number}), so that micro-batches arriving together
     * take turns as they would on one device, and always the same turns.
     */
    private static Tensor forward(List<Object> args) throws InterruptedException {
        check(args, 3);
        Module stage = stage(args.get(0));
        Tensor input = input(args.get(1));
        long ticket = ((Number) args.get(2)).longValue();
        StageTurns turns = TURNS.computeIfAbsent(stage, s -> new StageTurns());
        turns.await(ticket);
        try {
            synchronized (stage) {
                long computing = System.nanoTime();
                long begin = Meters.start();
                int rank = RpcAgent.current().self().id();
                TimelineRecorder timeline = TimelineRecorder.of(rank);
                long at = timeline == null ? 0 : timeline.now();
                Throwable failure = null;
                try {
                    return stage.forward(input);
                } catch (RuntimeException e) {
                    failure = e;
                    throw e;
                } finally {
                    computed(stage).addAndGet(System.nanoTime() - computing);
                    busy(rank, begin, failure);
                    if (timeline != null) {
                        timeline.span("pipeline", "stage forward", "pipeline stage", ticket, at,
                                new JsonObject().put("micro_batch", ticket));
                    }
                }
            }
        } finally {
            turns.done(ticket);
        }
    }

    private static AtomicLong computed(Module stage) {
        return COMPUTED_NANOS.computeIfAbsent(stage, s -> new AtomicLong());
    }

    /** Records a stage's busy time on rank {@code rank}'s meters ({@code tensorbus.pipeline.stage.busy}). */
    private static void busy(int rank, long begin, Throwable failure) {
        if (begin != 0) {
            BUSY.computeIfAbsent(rank, r -> Meters.operation(BUSY_METER, false, "rank", Integer.toString(r),
                    "pass", "forward")).record(begin, 0, failure);
        }
    }

    @SuppressWarnings("unchecked")
    private static Tensor input(Object o) {
        if (o instanceof Tensor t) {
            return t;
        }
        if (o instanceof RRef<?> r) {
            try (RRef<Tensor> ref = (RRef<Tensor>) r) {
                Object value = ref.toHere();
                if (value instanceof Tensor t) {
                    return t;
                }
                throw new IllegalArgumentException("a pipeline stage's input RRef holds " + value.getClass().getName()
                        + ", not a tensor");
            }
        }
        throw new IllegalArgumentException("a pipeline stage's input is a tensor or an RRef to one, got " + o);
    }

    private static Module stage(Object o) {
        if (o instanceof RRef<?> r && r.isOwner() && r.localValue() instanceof Module m) {
            Module stage = m;
            r.close();
            return stage;
        }
        throw new IllegalArgumentException("not an RRef to a module this worker holds: " + o);
    }

    private static void check(List<Object> args, int size) {
        if (args.size() != size) {
            throw new IllegalArgumentException("expected " + size + " arguments, got " + args.size());
        }
    }
}
