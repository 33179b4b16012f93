package io.tensorbus.backend.gloo;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import io.vertx.core.Future;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The ring reduce-scatter that gloo's all-reduce and reduce share: {@code numSegments} segments of
 * {@code segmentBytes} (the last ones short or empty), {@code numSegments / size} per rank; iteration {@code i} sends
 * segment {@code (rank + 1) x perRank + i} to rank - 1 and receives segment {@code (rank + 2) x perRank + i} from
 * rank + 1 into one half of a two-segment scratch, and first waits for the receive and send of iteration
 * {@code i - 2}, reducing the received segment into the buffer as {@code local op received}. The two algorithms
 * differ in their segment sizes and in how many iterations issue messages.
 */
final class RingReduceScatter {
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
    private final Future<Void>[] recvs;
    private final Future<Void>[] sends;

    RingReduceScatter(GlooContext context, MemorySegment out, DType dtype, ReduceOp op, long slot, long numSegments,
                      long segmentBytes) {
        this.context = context;
        this.out = out;
        this.dtype = dtype;
        this.op = op;
        this.slot = slot;
        this.totalBytes = out.byteSize();
        this.numSegments = numSegments;
        this.perRank = numSegments / context.size();
        this.segmentBytes = segmentBytes;
        this.tmp = scratch(segmentBytes * 2);
        this.recvs = Steps.futures(Math.toIntExact(numSegments + 2));
        this.sends = Steps.futures(Math.toIntExact(numSegments + 2));
    }

    /**
     * gloo's two segments of scratch: off the heap once segments are large, so that Netty reads them in place
     * ({@link GlooPair#inPlaceTarget()}); on it below, where an allocation per collective would cost more than the
     * copy it saves.
     */
    private static MemorySegment scratch(long bytes) {
        return bytes >= 2 * GlooPair.IN_PLACE_MIN ? Arena.ofAuto().allocate(bytes, 64)
                : MemorySegment.ofArray(new byte[Math.toIntExact(bytes)]);
    }

    long numSegments() {
        return numSegments;
    }

    long perRank() {
        return perRank;
    }

    long segmentBytes() {
        return segmentBytes;
    }

    /**
     * Runs iterations {@code 0 .. iterations - 1}, those below {@code issueBefore} issuing a send and a receive.
     */
    Future<Void> run(int iterations, long issueBefore) {
        return Steps.run(0, iterations, i -> step(i, issueBefore));
    }

    /**
     * gloo's offsets and lengths for iteration {@code i} of a ring whose sends start at segment
     * {@code first x perRank} and receives one rank's segments later: {@code [sendOffset, recvOffset, sendLength,
     * recvLength]}; a length of 0 or less means no message.
     */
    long[] offsets(long first, long i) {
        long all = numSegments * segmentBytes;
        long sendOffset = ((first * perRank + i) * segmentBytes) % all;
        long recvOffset = (((first + 1) * perRank + i) * segmentBytes) % all;
        return new long[] {sendOffset, recvOffset, Math.min(segmentBytes, totalBytes - sendOffset),
            Math.min(segmentBytes, totalBytes - recvOffset)};
    }

    private MemorySegment scratch(int i, long length) {
        return tmp.asSlice((i & 1) * segmentBytes, length);
    }

    /** gloo's {@code c = reduce(a, b)}: {@code acc}, this rank's value, first; the peer's segment second. */
    private void reduce(MemorySegment acc, MemorySegment received) {
        if (GlooMinMax.handles(op, dtype)) {
            GlooMinMax.reduceInto(op, dtype, acc, received);
        } else {
            HostReductions.reduceInto(op, dtype, acc, received);
        }
    }

    private Future<Void> step(int i, long issueBefore) {
        Future<Void> ready = Future.succeededFuture();
        if (i >= 2) {
            long[] prev = offsets(context.rank() + 1, i - 2);
            if (prev[3] > 0) {
                ready = recvs[i - 2].map(v -> {
                    reduce(out.asSlice(prev[1], prev[3]), scratch(i, prev[3]));
                    return null;
                });
            }
            if (prev[2] > 0) {
                ready = ready.compose(v -> sends[i - 2]);
            }
        }
        return ready.map(v -> {
            if (i < issueBefore) {
                long[] cur = offsets(context.rank() + 1, i);
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
}
