package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * gloo's all-gather ({@code gloo/allgather.cc}) into one flat buffer of {@code size x inBytes}: each rank's block
 * travels the ring towards rank + 1 in two halves, so that one half is in flight while the other is waited for;
 * {@code 2 x (size - 1)} messages each way.
 */
final class RingAllGather {
    private RingAllGather() {
    }

    /** Fills {@code flat} with every rank's block; this rank's block must already be in place. */
    static Future<Void> run(GlooContext context, MemorySegment flat, long slot) {
        int size = context.size();
        if (size == 1) {
            return Future.succeededFuture();
        }
        int rank = context.rank();
        long outBytes = flat.byteSize();
        long inBytes = outBytes / size;
        long[] chunkSize = {inBytes / 2, inBytes - inBytes / 2};
        long[] chunkOffset = {0, inBytes / 2};
        int recvRank = (size + rank - 1) % size;
        int sendRank = (rank + 1) % size;
        ArrayDeque<Future<Void>> sends = new ArrayDeque<>();
        ArrayDeque<Future<Void>> recvs = new ArrayDeque<>();
        return Steps.run(0, (size - 1) * 2, i -> {
            Future<Void> ready = i < 2 ? Future.succeededFuture() : oldest(sends, recvs);
            return ready.map(v -> {
                long sendSegment = size + rank - (i / 2);
                long sendOffset = (sendSegment * inBytes + chunkOffset[i & 1]) % outBytes;
                long recvOffset = ((sendSegment - 1) * inBytes + chunkOffset[i & 1]) % outBytes;
                long length = chunkSize[i & 1];
                sends.add(context.send(sendRank, slot, flat.asSlice(sendOffset, length)));
                recvs.add(context.recv(recvRank, slot, flat.asSlice(recvOffset, length)));
                return null;
            });
        }).compose(v -> oldest(sends, recvs)).compose(v -> oldest(sends, recvs));
    }

    private static Future<Void> oldest(ArrayDeque<Future<Void>> sends, ArrayDeque<Future<Void>> recvs) {
        Future<Void> send = sends.poll();
        Future<Void> recv = recvs.poll();
        return send.compose(v -> recv);
    }
}
