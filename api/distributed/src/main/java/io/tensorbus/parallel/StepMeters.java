package io.tensorbus.parallel;

import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Meters;
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

    StepMeters(ProcessGroup group) {
        String rank = Integer.toString(group.isMember() ? group.globalRank(group.rank()) : -1);
        this.step = Meters.operation(STEP, false, "rank", rank);
        this.bucket = Meters.operation(BUCKET, true, "rank", rank);
        this.overlap = Meters.summary(OVERLAP, "rank", rank);
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
}
