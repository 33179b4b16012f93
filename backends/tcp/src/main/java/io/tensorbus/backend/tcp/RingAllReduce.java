package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * Bandwidth-optimal all-reduce for large buffers: a ring reduce-scatter then a ring all-gather (Baidu's and
 * gloo's ring), each rank sending and receiving 2(n-1)/n of the buffer. Each of the n segments is cut into
 * chunks that move independently, so receiving, reducing (straight from the socket into the buffer) and
 * forwarding overlap. Each segment is reduced by one rank and then copied, so all ranks end bit-identical.
 */
final class RingAllReduce {
    private static final int REDUCE_SCATTER = 0;
    private static final int ALL_GATHER = 1;

    private RingAllReduce() {
    }

    static Future<Void> run(CollectiveOp op, Region buf, ReduceOp reduceOp, DType dtype) {
        int n = op.size();
        int r = op.rank();
        int right = (r + 1) % n;
        int left = (r - 1 + n) % n;
        int e = dtype.byteSize();
        int chunks = Chunks.count(Chunks.part(buf, e, n, 0).byteSize(), op.chunkBytes());
        List<Future<Void>> all = new ArrayList<>();
        for (int j = 0; j < chunks; j++) {
            Future<Void> previous = Future.succeededFuture();
            for (int s = 0; s < 2 * (n - 1); s++) {
                boolean reducing = s < n - 1;
                int step = reducing ? s : s - (n - 1);
                int sendSegment = reducing ? mod(r - step, n) : mod(r + 1 - step, n);
                int recvSegment = reducing ? mod(r - step - 1, n) : mod(r - step, n);
                long tag = tag(reducing ? REDUCE_SCATTER : ALL_GATHER, step, j);
                Region out = chunk(buf, e, n, sendSegment, chunks, j);
                Region in = chunk(buf, e, n, recvSegment, chunks, j);
                Future<Void> received = reducing ? op.recvReduce(left, tag, in, reduceOp, dtype)
                        : op.recvInto(left, tag, in);
                all.add(previous.compose(v -> op.send(right, tag, out)));
                previous = received;
            }
            all.add(previous);
        }
        return Future.all(all).mapEmpty();
    }

    private static Region chunk(Region buf, int e, int n, int segment, int chunks, int j) {
        return Chunks.part(Chunks.part(buf, e, n, segment), e, chunks, j);
    }

    static int mod(int a, int n) {
        return ((a % n) + n) % n;
    }
}
