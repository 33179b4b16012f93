package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's reduce ({@code gloo/reduce.cc}), message for message: a ring reduce-scatter with gloo's own segment sizes
 * (about a (2 x ranks)-th of the buffer, at most 1 MiB) and its own iteration count, after which every rank sends
 * the chunk it finished to the root. Only the root's buffer holds the result; the others hold partial sums.
 */
final class RingReduce {
    private final GlooContext context;
    private final MemorySegment out;
    private final DType dtype;
    private final ReduceOp op;
    private final long slot;
    private final int root;
    private final long totalBytes;
    private final long numSegments;
    private final long perRank;
    private final long segmentBytes;
    private final MemorySegment tmp;
    private final Future<Void>[] recvs;
    private final Future<Void>[] sends;

    private RingReduce(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, int root, long slot) {
        this.context = context;
        this.out = out;
        this.dtype = dtype;
        this.op = op;
        this.root = root;
        this.slot = slot;
        int size = context.size();
        int element = dtype.byteSize();
        totalBytes = out.byteSize();
        long maxSegmentBytes = element * (RingAllReduce.MAX_SEGMENT_BYTES / element);
        segmentBytes = Steps.roundUp(Math.min((totalBytes + size * 2L - 1) / (size * 2L), maxSegmentBytes), element);
        numSegments = Steps.roundUp(Math.max((totalBytes + segmentBytes - 1) / segmentBytes, 2L * size), size);
        perRank = numSegments / size;
        tmp = MemorySegment.ofArray(new byte[(int) (segmentBytes * 2)]);
        recvs = Steps.futures((int) numSegments);
        sends = Steps.futures((int) numSegments);
    }

    /** Reduces every rank's {@code out} into the root's. */
    static Future<Void> run(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, int root, long slot) {
        if (out.byteSize() == 0 || context.size() == 1) {
            return Future.succeededFuture();
        }
        RingReduce r = new RingReduce(context, out, dtype, op, root, slot);
        return Steps.run(0, (int) r.numSegments, r::step).compose(v -> r.toRoot());
    }

    private long[] offsets(long i) {
        long all = numSegments * segmentBytes;
        int rank = context.rank();
        long sendOffset = (((rank + 1L) * perRank + i) * segmentBytes) % all;
        long recvOffset = (((rank + 2L) * perRank + i) * segmentBytes) % all;
        return new long[] {sendOffset, recvOffset, Math.min(segmentBytes, totalBytes - sendOffset),
            Math.min(segmentBytes, totalBytes - recvOffset)};
    }

    private MemorySegment scratch(int i, long length) {
        return tmp.asSlice((i & 1) * segmentBytes, length);
    }

    private Future<Void> step(int i) {
        Future<Void> ready = Future.succeededFuture();
        if (i >= 2) {
            long[] prev = offsets(i - 2);
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
            if (i < numSegments - 2) {
                long[] cur = offsets(i);
                int size = context.size();
                if (cur[3] > 0) {
                    recvs[i] = context.recv((context.rank() + 1) % size, slot, scratch(i, cur[3]));
                }
                if (cur[2] > 0) {
                    sends[i] = context.send((size + context.rank() - 1) % size, slot, out.asSlice(cur[0], cur[2]));
                }
            }
            return null;
        });
    }

    private Future<Void> toRoot() {
        long chunkBytes = perRank * segmentBytes;
        if (context.rank() != root) {
            long offset = context.rank() * chunkBytes;
            long length = Math.min(chunkBytes, totalBytes - offset);
            return length > 0 ? context.send(root, slot, out.asSlice(offset, length)) : Future.succeededFuture();
        }
        Future<Void> all = Future.succeededFuture();
        for (int r = 0; r < context.size(); r++) {
            long offset = r * chunkBytes;
            long length = Math.min(chunkBytes, totalBytes - offset);
            if (r != context.rank() && length > 0) {
                Future<Void> received = context.recv(r, slot, out.asSlice(offset, length));
                all = all.compose(v -> received);
            }
        }
        return all;
    }
}
