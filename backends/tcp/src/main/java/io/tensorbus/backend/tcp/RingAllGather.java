package io.tensorbus.backend.tcp;

import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * All-gather on a ring: in step s every rank forwards to its right neighbour the block it received in step
 * s-1 (its own input first), n-1 steps, each block cut into pipelined chunks. Blocks are received straight
 * into the caller's output buffers.
 */
final class RingAllGather {
    private RingAllGather() {
    }

    static Future<Void> run(CollectiveOp op, List<Region> outputs, Region input) {
        int n = op.size();
        int r = op.rank();
        return op.copy(input, outputs.get(r)).compose(v -> exchange(op, outputs, input));
    }

    private static Future<Void> exchange(CollectiveOp op, List<Region> outputs, Region input) {
        int n = op.size();
        int r = op.rank();
        int right = (r + 1) % n;
        int left = (r - 1 + n) % n;
        int chunks = Chunks.count(input.byteSize(), op.chunkBytes());
        // Element-aligned chunks: a device buffer's range is staged as whole elements.
        int e = op.call.dtype().byteSize();
        List<Future<Void>> all = new ArrayList<>();
        for (int j = 0; j < chunks; j++) {
            Future<Void> previous = Future.succeededFuture();
            for (int s = 0; s < n - 1; s++) {
                Region out = Chunks.part(s == 0 ? input : outputs.get(RingAllReduce.mod(r - s, n)), e, chunks, j);
                Region in = Chunks.part(outputs.get(RingAllReduce.mod(r - s - 1, n)), e, chunks, j);
                long tag = tag(0, s, j);
                Future<Void> received = op.recvInto(left, tag, in);
                all.add(previous.compose(v -> op.send(right, tag, out)));
                previous = received;
            }
            all.add(previous);
        }
        return Future.all(all).mapEmpty();
    }
}
