package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
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

    static Future<Void> run(CollectiveOp op, Region output, List<Region> inputs, ReduceOp reduceOp,
                            DType dtype) {
        int n = op.size();
        int r = op.rank();
        Future<Void> own = op.copy(inputs.get(r), output);
        if (n == 1) {
            return own;
        }
        Region[] acc = new Region[n - 1];
        List<Future<?>> ready = new ArrayList<>(List.of(own));
        for (int s = 0; s < n - 1; s++) {
            int slot = s;
            if (s == n - 2) {
                acc[s] = output;
            } else {
                ready.add(op.duplicate(inputs.get(RingAllReduce.mod(r - s - 2, n))).map(c -> acc[slot] = c));
            }
        }
        return Future.all(ready).compose(v -> ring(op, output, inputs, acc, reduceOp, dtype));
    }

    private static Future<Void> ring(CollectiveOp op, Region output, List<Region> inputs, Region[] acc,
                                     ReduceOp reduceOp, DType dtype) {
        int n = op.size();
        int r = op.rank();
        int right = (r + 1) % n;
        int left = (r - 1 + n) % n;
        int e = dtype.byteSize();
        int chunks = Chunks.count(output.byteSize(), op.chunkBytes());
        List<Future<Void>> all = new ArrayList<>();
        for (int j = 0; j < chunks; j++) {
            Future<Void> previous = Future.succeededFuture();
            for (int s = 0; s < n - 1; s++) {
                Region source = s == 0 ? inputs.get(RingAllReduce.mod(r - 1, n)) : acc[s - 1];
                Region out = Chunks.part(source, e, chunks, j);
                Region in = Chunks.part(acc[s], e, chunks, j);
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
