package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * Latency-optimal broadcast and reduce for small buffers: a binomial tree rooted at the root, ceil(log2 n)
 * rounds. Ranks are renumbered relative to the root ({@code (rank - root) mod n}).
 */
final class BinomialTree {
    private BinomialTree() {
    }

    static Future<Void> broadcast(CollectiveOp op, Region buf, int root) {
        int n = op.size();
        int vr = relative(op.rank(), root, n);
        int mask = 1;
        Future<Void> received = Future.succeededFuture();
        while (mask < n) {
            if ((vr & mask) != 0) {
                received = op.recvInto(absolute(vr - mask, root, n), tag(0, 0, 0), buf);
                break;
            }
            mask <<= 1;
        }
        int top = mask;
        return received.compose(v -> {
            List<Future<Void>> sends = new ArrayList<>();
            for (int m = top >> 1; m > 0; m >>= 1) {
                if (vr + m < n) {
                    sends.add(op.send(absolute(vr + m, root, n), tag(0, 0, 0), buf));
                }
            }
            return Future.all(sends).mapEmpty();
        });
    }

    /** Reduces into the root's buffer; other ranks accumulate in a scratch copy and keep their buffers. */
    static Future<Void> reduce(CollectiveOp op, Region buf, int root, ReduceOp reduceOp, DType dtype) {
        int n = op.size();
        int vr = relative(op.rank(), root, n);
        return (vr == 0 ? Future.succeededFuture(buf) : op.duplicate(buf)).compose(acc -> reduceInto(op, acc, vr,
                root, reduceOp, dtype));
    }

    private static Future<Void> reduceInto(CollectiveOp op, Region acc, int vr, int root, ReduceOp reduceOp,
                                           DType dtype) {
        int n = op.size();
        Future<Void> f = Future.succeededFuture();
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((vr & mask) != 0) {
                int parent = absolute(vr - mask, root, n);
                return f.compose(v -> op.send(parent, tag(0, 0, 0), acc));
            }
            if (vr + mask < n) {
                int child = absolute(vr + mask, root, n);
                f = f.compose(v -> op.recvReduce(child, tag(0, 0, 0), acc, reduceOp, dtype));
            }
        }
        return f;
    }

    static int relative(int rank, int root, int n) {
        return (rank - root + n) % n;
    }

    static int absolute(int relative, int root, int n) {
        return (relative + root) % n;
    }
}
