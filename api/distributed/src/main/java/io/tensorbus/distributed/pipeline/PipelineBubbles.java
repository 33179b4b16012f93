package io.tensorbus.distributed.pipeline;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.nn.Module;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The bubble of each forward pass of a {@link Pipeline} while metrics are on: for each stage, the share of the
 * pass's time, as the driver saw it, in which the stage computed nothing (ideally GPipe's {@code (S-1)/(M+S-1)} of S
 * stages and M micro-batches; more where stages are unbalanced or messages slow). The stages' computing time
 * comes from {@value PipelineStages#COMPUTED}, read after each pass, so the first pass only sets the baseline; each
 * later one is recorded as the summary {@value #METER}, tags {@code stage} (its index) and {@code worker}. A pass
 * that overlapped another, or began before the last one's times came back, is not recorded: the stages' time would
 * be both passes'.
 */
final class PipelineBubbles {
    /** The summary of each stage's bubble, 0 to 1. */
    static final String METER = Meters.PREFIX + "pipeline.bubble";

    private final RpcAgent agent;
    private final List<RRef<Module>> stages;
    private final List<Meters.Summary> summaries = new ArrayList<>();
    private final AtomicLong started = new AtomicLong();
    private final AtomicInteger running = new AtomicInteger();
    /** The stages' computing times after the last pass; null before the first. */
    private Future<long[]> lastComputed;

    PipelineBubbles(RpcAgent agent, List<RRef<Module>> stages) {
        this.agent = agent;
        this.stages = stages;
        for (int k = 0; k < stages.size(); k++) {
            summaries.add(Meters.summary(METER, "stage", Integer.toString(k), "worker", stages.get(k).owner().name()));
        }
    }

    /**
     * Runs {@code pass} (a forward pass) on this thread, as its distributed autograd context needs, measuring its
     * bubble when metrics are on and the stages' computing times after the last pass are known.
     */
    <T> Future<T> measure(Supplier<Future<T>> pass) {
        if (!Meters.on()) {
            return pass.get();
        }
        long[] before;
        synchronized (this) {
            before = lastComputed != null && lastComputed.succeeded() ? lastComputed.result() : null;
        }
        long id = started.incrementAndGet();
        boolean alone = running.incrementAndGet() == 1;
        long begin = System.nanoTime();
        Future<T> result = pass.get();
        result.onComplete(r -> {
            long wall = System.nanoTime() - begin;
            running.decrementAndGet();
            // Alone at its start, and none started since: no other pass ran beside it.
            boolean stillAlone = alone && started.get() == id;
            Future<long[]> after = computed();
            synchronized (this) {
                lastComputed = after;
            }
            if (r.succeeded() && before != null && stillAlone) {
                after.onSuccess(a -> record(before, a, wall));
            }
        });
        return result;
    }

    private Future<long[]> computed() {
        List<Future<Object>> each = new ArrayList<>();
        for (RRef<Module> stage : stages) {
            each.add(agent.rpcAsync(stage.owner(), agent.options().timeout(), PipelineStages.COMPUTED, stage));
        }
        return Future.all(each).map(all -> {
            long[] nanos = new long[each.size()];
            for (int k = 0; k < nanos.length; k++) {
                nanos[k] = ((Number) each.get(k).result()).longValue();
            }
            return nanos;
        });
    }

    private void record(long[] before, long[] after, long wallNanos) {
        for (int k = 0; k < before.length; k++) {
            double computing = (after[k] - before[k]) / (double) wallNanos;
            summaries.get(k).record(Math.max(0, Math.min(1, 1 - computing)));
        }
    }
}
