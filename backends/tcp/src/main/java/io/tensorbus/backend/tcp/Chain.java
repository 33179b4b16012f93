package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * Bandwidth-optimal broadcast and reduce for large buffers: the ranks form a chain starting (broadcast) or
 * ending (reduce) at the root, and the buffer flows along it in chunks, so every link is busy at once and
 * each rank sends and receives the buffer once.
 */
final class Chain {
    private Chain() {
    }

    static Future<Void> broadcast(CollectiveOp op, Region buf, int root) {
        int n = op.size();
        int vr = BinomialTree.relative(op.rank(), root, n);
        int prev = BinomialTree.absolute(vr - 1, root, n);
        int next = vr + 1 < n ? BinomialTree.absolute(vr + 1, root, n) : -1;
        int chunks = Chunks.count(buf.byteSize(), op.chunkBytes());
        // Element-aligned chunks: a device buffer's range is staged as whole elements.
        int e = op.call.dtype().byteSize();
        List<Future<Void>> all = new ArrayList<>();
        for (int j = 0; j < chunks; j++) {
            Region chunk = Chunks.part(buf, e, chunks, j);
            long tag = tag(0, 0, j);
            Future<Void> have = vr == 0 ? Future.succeededFuture() : op.recvInto(prev, tag, chunk);
            all.add(next < 0 ? have : have.compose(v -> op.send(next, tag, chunk)));
        }
        return Future.all(all).mapEmpty();
    }

    /** Reduces into the root's buffer; the others accumulate in a scratch copy and keep their buffers. */
    static Future<Void> reduce(CollectiveOp op, Region buf, int root, ReduceOp reduceOp, DType dtype) {
        int n = op.size();
        int vr = BinomialTree.relative(op.rank(), root, n);
        int toward = vr > 0 ? BinomialTree.absolute(vr - 1, root, n) : -1;
        int from = vr + 1 < n ? BinomialTree.absolute(vr + 1, root, n) : -1;
        return (vr == 0 ? Future.succeededFuture(buf) : op.duplicate(buf)).compose(acc -> {
            int e = dtype.byteSize();
            int chunks = Chunks.count(buf.byteSize(), op.chunkBytes());
            List<Future<Void>> all = new ArrayList<>();
            for (int j = 0; j < chunks; j++) {
                Region chunk = Chunks.part(acc, e, chunks, j);
                long tag = tag(0, 0, j);
                Future<Void> have = from < 0 ? Future.succeededFuture()
                        : op.recvReduce(from, tag, chunk, reduceOp, dtype);
                all.add(toward < 0 ? have : have.compose(v -> op.send(toward, tag, chunk)));
            }
            return Future.all(all).mapEmpty();
        });
    }
}
