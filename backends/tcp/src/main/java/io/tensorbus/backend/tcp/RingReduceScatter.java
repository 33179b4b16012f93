package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * Reduce-scatter on a ring: in step s every rank sends its partial sum of block {@code r-s-1} to the right
 * and adds what it receives from the left to its own input of block {@code r-s-2}; after n-1 steps rank r
 * holds the full reduction of block r. Inputs are left untouched: partial sums live in scratch buffers, the
 * last one in the output.
 */
final class RingReduceScatter {
    private RingReduceScatter() {
    }

    static Future<Void> run(CollectiveOp op, MemorySegment output, List<MemorySegment> inputs, ReduceOp reduceOp,
                            DType dtype) {
        int n = op.size();
        int r = op.rank();
        output.copyFrom(inputs.get(r));
        if (n == 1) {
            return Future.succeededFuture();
        }
        int right = (r + 1) % n;
        int left = (r - 1 + n) % n;
        int e = dtype.byteSize();
        MemorySegment[] acc = new MemorySegment[n - 1];
        for (int s = 0; s < n - 1; s++) {
            acc[s] = s == n - 2 ? output : CollectiveOp.copyOf(inputs.get(RingAllReduce.mod(r - s - 2, n)));
        }
        int chunks = Chunks.count(output.byteSize(), op.chunkBytes());
        List<Future<Void>> all = new ArrayList<>();
        for (int j = 0; j < chunks; j++) {
            Future<Void> previous = Future.succeededFuture();
            for (int s = 0; s < n - 1; s++) {
                MemorySegment source = s == 0 ? inputs.get(RingAllReduce.mod(r - 1, n)) : acc[s - 1];
                MemorySegment out = Chunks.part(source, e, chunks, j);
                MemorySegment in = Chunks.part(acc[s], e, chunks, j);
                long tag = tag(0, s, j);
                Future<Void> received = op.recvReduce(left, tag, in, reduceOp, dtype);
                all.add(previous.compose(v -> op.send(right, tag, out)));
                previous = received;
            }
            all.add(previous);
        }
        return Future.all(all).mapEmpty();
    }
}
