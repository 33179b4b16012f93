package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's ring all-reduce ({@code gloo/allreduce.cc}, {@code ring}), message for message: the buffer is cut into
 * segments of at most 1 MiB, at least two per rank and as many on every rank; a reduce-scatter passes segments to
 * rank - 1 and reduces what rank + 1 sends into a two-segment scratch, then an all-gather passes the reduced
 * segments on. Each iteration waits for the operations of two iterations before, as gloo's loop does, and reduces
 * in gloo's order ({@code local op received}), so float results are bitwise gloo's.
 */
final class RingAllReduce {
    /** gloo's {@code kMaxSegmentSize}. */
    static final long MAX_SEGMENT_BYTES = 1 << 20;

    private final GlooContext context;
    private final MemorySegment out;
    private final DType dtype;
    private final ReduceOp op;
    private final long slot;
    private final long totalBytes;
    private final long numSegments;
    private final long perRank;
    private final long segmentBytes;
    private final MemorySegment tmp;
    private final int recvRank;
    private final int sendRank;
    private final Future<Void>[] recvs;
    private final Future<Void>[] sends;

    private RingAllReduce(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, long slot) {
        this.context = context;
        this.out = out;
        this.dtype = dtype;
        this.op = op;
        this.slot = slot;
        int size = context.size();
        int element = dtype.byteSize();
        totalBytes = out.byteSize();
        long maxSegmentBytes = element * Math.max(1, MAX_SEGMENT_BYTES / element);
        numSegments = Steps.roundUp(Math.max((totalBytes + maxSegmentBytes - 1) / maxSegmentBytes, 2L * size), size);
        perRank = numSegments / size;
        segmentBytes = Steps.roundUp((totalBytes + numSegments - 1) / numSegments, element);
        tmp = MemorySegment.ofArray(new byte[(int) (segmentBytes * 2)]);
        recvRank = (context.rank() + 1) % size;
        sendRank = (size + context.rank() - 1) % size;
        int iterations = iterations();
        recvs = Steps.futures(iterations);
        sends = Steps.futures(iterations);
    }

    /** All-reduces {@code out} in place across the context's ranks. */
    static Future<Void> run(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, long slot) {
        if (out.byteSize() == 0 || context.size() == 1) {
            return Future.succeededFuture();
        }
        RingAllReduce ring = new RingAllReduce(context, out, dtype, op, slot);
        return Steps.run(0, ring.iterations(), ring::reduceScatterStep)
                .compose(v -> Steps.run(0, ring.iterations(), ring::allGatherStep));
    }

    private int iterations() {
        return (int) (numSegments - perRank + 2);
    }

    /** gloo's {@code computeReduceScatterOffsets} ({@code first} = rank + 1) and allgather's ({@code first} = rank). */
    private long[] offsets(long first, long i) {
        long all = numSegments * segmentBytes;
        long sendOffset = ((first * perRank + i) * segmentBytes) % all;
        long recvOffset = (((first + 1) * perRank + i) * segmentBytes) % all;
        return new long[] {sendOffset, recvOffset, Math.min(segmentBytes, totalBytes - sendOffset),
            Math.min(segmentBytes, totalBytes - recvOffset)};
    }

    private MemorySegment scratch(int i, long length) {
        return tmp.asSlice((i & 1) * segmentBytes, length);
    }

    private Future<Void> reduceScatterStep(int i) {
        Future<Void> ready = Future.succeededFuture();
        if (i >= 2) {
            long[] prev = offsets(context.rank() + 1, i - 2);
            if (prev[3] > 0) {
                ready = recvs[i - 2].map(v -> {
                    HostReductions.reduceInto(op, dtype, out.asSlice(prev[1], prev[3]), scratch(i, prev[3]));
                    return null;
                });
            }
            if (prev[2] > 0) {
                ready = ready.compose(v -> sends[i - 2]);
            }
        }
        return ready.map(v -> {
            if (i < numSegments - perRank) {
                long[] cur = offsets(context.rank() + 1, i);
                if (cur[3] > 0) {
                    recvs[i] = context.recv(recvRank, slot, scratch(i, cur[3]));
                }
                if (cur[2] > 0) {
                    sends[i] = context.send(sendRank, slot, out.asSlice(cur[0], cur[2]));
                }
            }
            return null;
        });
    }

    private Future<Void> allGatherStep(int i) {
        Future<Void> ready = Future.succeededFuture();
        if (i >= 2) {
            long[] prev = offsets(context.rank(), i - 2);
            if (prev[3] > 0) {
                ready = recvs[i - 2];
            }
            if (prev[2] > 0) {
                ready = ready.compose(v -> sends[i - 2]);
            }
        }
        return ready.map(v -> {
            if (i < numSegments - perRank) {
                long[] cur = offsets(context.rank(), i);
                if (cur[3] > 0) {
                    recvs[i] = context.recv(recvRank, slot, out.asSlice(cur[1], cur[3]));
                }
                if (cur[2] > 0) {
                    sends[i] = context.send(sendRank, slot, out.asSlice(cur[0], cur[2]));
                }
            }
            return null;
        });
    }
}
