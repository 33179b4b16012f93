package io.tensorbus.parallel;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The meters of one DDP model's synchronised steps ({@link io.tensorbus.distributed.metrics.TensorbusMetrics}): the
 * step from forward to reduced gradients, each bucket's all-reduce, and the share of the reductions' time that ran
 * while backward was still computing (DDP's reason to bucket). Used on the training thread; the bucket times are
 * written by the reductions' completions.
 */
final class StepMeters {
    static final String STEP = Meters.PREFIX + "ddp.step";
    static final String BUCKET = Meters.PREFIX + "ddp.bucket.allreduce";
    static final String OVERLAP = Meters.PREFIX + "ddp.overlap";
    private final Meters.Operation step;
    private final Meters.Operation bucket;
    private final Meters.Summary overlap;

    private final int globalRank;

    StepMeters(ProcessGroup group) {
        this.globalRank = group.isMember() ? group.globalRank(group.rank()) : -1;
        String rank = Integer.toString(globalRank);
        this.step = Meters.operation(STEP, false, "rank", rank);
        this.bucket = Meters.operation(BUCKET, true, "rank", rank);
        this.overlap = Meters.summary(OVERLAP, "rank", rank);
    }

    /** When a step begins: now, when metrics are on or this rank has a timeline; else 0 (nothing is measured). */
    long begin() {
        return Meters.on() || TimelineRecorder.of(globalRank) != null ? System.nanoTime() : 0;
    }

    /** Times bucket {@code b}'s reduction, just launched, when metrics are on. */
    void launched(Bucket b) {
        long begin = Meters.start();
        b.launchedNanos = begin;
        b.reducedNanos = 0;
        if (begin != 0) {
            long bytes = b.buffer.numel() * b.buffer.dtype().byteSize();
            b.work.onComplete(r -> {
                b.reducedNanos = System.nanoTime();
                bucket.record(begin, bytes, r.cause());
            });
        }
    }

    /**
     * Records a step that began (its forward) at {@code stepBegin} and whose backward ended at
     * {@code backwardEnd}; its {@code buckets} are reduced.
     */
    void ended(long stepBegin, long backwardEnd, List<Bucket> buckets, Throwable failure) {
        timelineStep(stepBegin, backwardEnd, failure);
        if (stepBegin == 0 || !Meters.on()) {
            return;
        }
        step.record(stepBegin, 0, failure);
        long total = 0;
        long during = 0;
        for (Bucket b : buckets) {
            if (b.launchedNanos != 0 && b.reducedNanos != 0) {
                total += b.reducedNanos - b.launchedNanos;
                during += Math.max(0, Math.min(b.reducedNanos, backwardEnd) - b.launchedNanos);
            }
        }
        if (failure == null && total > 0) {
            overlap.record((double) during / total);
        }
    }

    /** The step on this rank's timeline, when it has one: forward and backward, then the wait for the reductions. */
    private void timelineStep(long stepBegin, long backwardEnd, Throwable failure) {
        TimelineRecorder timeline = TimelineRecorder.of(globalRank);
        if (timeline == null || stepBegin == 0) {
            return;
        }
        // stepBegin and backwardEnd are nanoTime readings; the timeline counts microseconds on its own base.
        long start = timeline.now() - (System.nanoTime() - stepBegin) / 1000;
        JsonObject args = new JsonObject().put("forward_backward_us", (backwardEnd - stepBegin) / 1000);
        timeline.complete("ddp", failure == null ? "step" : "step (failed)", "ddp", start, args);
    }
}
