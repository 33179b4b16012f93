package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's ring all-reduce ({@code gloo/allreduce.cc}, {@code ring}), message for message: the buffer is cut into
 * segments of at most 1 MiB, at least two per rank and as many on every rank; a {@link RingReduceScatter} leaves
 * each rank with its reduced segments, then an all-gather passes them on to rank - 1. Each iteration waits for the
 * operations of two iterations before, as gloo's loop does, and reduces in gloo's order ({@code local op received}),
 * so float results are bitwise gloo's.
 */
final class RingAllReduce {
    /** gloo's {@code kMaxSegmentSize}. */
    static final long MAX_SEGMENT_BYTES = 1 << 20;

    private RingAllReduce() {
    }

    /** All-reduces {@code out} in place across the context's ranks. */
    static Future<Void> run(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, long slot) {
        if (out.byteSize() == 0 || context.size() == 1) {
            return Future.succeededFuture();
        }
        int size = context.size();
        long element = dtype.byteSize();
        long total = out.byteSize();
        long maxSegmentBytes = element * Math.max(1, MAX_SEGMENT_BYTES / element);
        long numSegments = Steps.roundUp(Math.max((total + maxSegmentBytes - 1) / maxSegmentBytes, 2L * size), size);
        long segmentBytes = Steps.roundUp((total + numSegments - 1) / numSegments, element);
        RingReduceScatter ring = new RingReduceScatter(context, out, dtype, op, slot, numSegments, segmentBytes);
        long issueBefore = numSegments - ring.perRank();
        int iterations = Math.toIntExact(issueBefore + 2);
        Future<Void>[] recvs = Steps.futures(iterations);
        Future<Void>[] sends = Steps.futures(iterations);
        return ring.run(iterations, issueBefore).compose(v -> Steps.run(0, iterations,
                i -> allGatherStep(context, ring, out, slot, i, issueBefore, recvs, sends)));
    }

    /** gloo's all-gather phase: segment {@code rank x perRank + i} goes to rank - 1, straight into the buffer. */
    private static Future<Void> allGatherStep(GlooContext context, RingReduceScatter ring, MemorySegment out,
                                              long slot, int i, long issueBefore, Future<Void>[] recvs,
                                              Future<Void>[] sends) {
        Future<Void> ready = Future.succeededFuture();
        if (i >= 2) {
            long[] prev = ring.offsets(context.rank(), i - 2);
            if (prev[3] > 0) {
                ready = recvs[i - 2];
            }
            if (prev[2] > 0) {
                Future<Void> sent = sends[i - 2];
                ready = ready.compose(v -> sent);
            }
        }
        return ready.map(v -> {
            if (i < issueBefore) {
                long[] cur = ring.offsets(context.rank(), i);
                int size = context.size();
                if (cur[3] > 0) {
                    recvs[i] = context.recv((context.rank() + 1) % size, slot, out.asSlice(cur[1], cur[3]));
                }
                if (cur[2] > 0) {
                    sends[i] = context.send((size + context.rank() - 1) % size, slot, out.asSlice(cur[0], cur[2]));
                }
            }
            return null;
        });
    }
}
