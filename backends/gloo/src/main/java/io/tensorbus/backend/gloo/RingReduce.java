package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's reduce ({@code gloo/reduce.cc}), message for message: a {@link RingReduceScatter} with gloo's reduce
 * segment sizes (about a (2 x ranks)-th of the buffer, at most 1 MiB) and its iteration count (issuing in all but
 * the last two of {@code numSegments} iterations), after which every rank sends the chunk it finished to the root.
 * Only the root's buffer holds the result; the others hold partial sums.
 */
final class RingReduce {
    private RingReduce() {
    }

    /** Reduces every rank's {@code out} into the root's. */
    static Future<Void> run(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, int root, long slot) {
        if (out.byteSize() == 0 || context.size() == 1) {
            return Future.succeededFuture();
        }
        int size = context.size();
        long element = dtype.byteSize();
        long total = out.byteSize();
        long maxSegmentBytes = element * (RingAllReduce.MAX_SEGMENT_BYTES / element);
        long segmentBytes = Steps.roundUp(Math.min((total + size * 2L - 1) / (size * 2L), maxSegmentBytes), element);
        long numSegments = Steps.roundUp(Math.max((total + segmentBytes - 1) / segmentBytes, 2L * size), size);
        RingReduceScatter ring = new RingReduceScatter(context, out, dtype, op, slot, numSegments, segmentBytes);
        return ring.run(Math.toIntExact(numSegments), numSegments - 2)
                .compose(v -> toRoot(context, out, root, slot, ring.perRank() * segmentBytes));
    }

    /** Every rank's finished chunk ({@code chunkBytes} from {@code rank x chunkBytes}) to the root. */
    private static Future<Void> toRoot(GlooContext context, MemorySegment out, int root, long slot, long chunkBytes) {
        long total = out.byteSize();
        if (context.rank() != root) {
            long offset = context.rank() * chunkBytes;
            long length = Math.min(chunkBytes, total - offset);
            return length > 0 ? context.send(root, slot, out.asSlice(offset, length)) : Future.succeededFuture();
        }
        Future<Void> all = Future.succeededFuture();
        for (int r = 0; r < context.size(); r++) {
            long offset = r * chunkBytes;
            long length = Math.min(chunkBytes, total - offset);
            if (r != context.rank() && length > 0) {
                Future<Void> received = context.recv(r, slot, out.asSlice(offset, length));
                all = all.compose(v -> received);
            }
        }
        return all;
    }
}
