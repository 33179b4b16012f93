package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * Latency-optimal all-reduce for small buffers: log2(p) rounds in which partners swap whole buffers and
 * both reduce. A world that is not a power of two first folds its extra ranks into partners and sends them
 * the result at the end (Rabenseifner's scheme). Both partners compute {@code a op b} with the same
 * operands, so every rank ends with bit-identical results.
 */
final class RecursiveDoubling {
    private static final int FOLD = 0;
    private static final int ROUND = 1;
    private static final int UNFOLD = 2;

    private RecursiveDoubling() {
    }

    static Future<Void> allReduce(CollectiveOp op, Region buf, ReduceOp reduceOp, DType dtype) {
        int n = op.size();
        int rank = op.rank();
        int pow2 = Integer.highestOneBit(n);
        int extra = n - pow2;
        if (rank < 2 * extra && rank % 2 == 0) {
            // Folded out: hand the buffer to the odd partner, get the result back.
            return op.send(rank + 1, tag(FOLD, 0, 0), buf).compose(v -> op.recvInto(rank + 1, tag(UNFOLD, 0, 0), buf));
        }
        Future<Void> f = rank < 2 * extra ? op.recvReduce(rank - 1, tag(FOLD, 0, 0), buf, reduceOp, dtype)
                : Future.succeededFuture();
        int virtual = rank < 2 * extra ? rank / 2 : rank - extra;
        int round = 0;
        for (int mask = 1; mask < pow2; mask <<= 1, round++) {
            int partnerVirtual = virtual ^ mask;
            int partner = partnerVirtual < extra ? partnerVirtual * 2 + 1 : partnerVirtual + extra;
            long tag = tag(ROUND, round, 0);
            f = f.compose(v -> exchange(op, partner, tag, buf, reduceOp, dtype));
        }
        if (rank < 2 * extra) {
            f = f.compose(v -> op.send(rank - 1, tag(UNFOLD, 0, 0), buf));
        }
        return f;
    }

    /**
     * The peer this rank sends its unchanged buffer to first, or -1 when its first message depends on another
     * one (a rank that folds a partner in): that first message can leave before the collective starts.
     */
    static int firstPeer(int rank, int n) {
        int extra = n - Integer.highestOneBit(n);
        if (rank < 2 * extra) {
            return rank % 2 == 0 ? rank + 1 : -1;
        }
        if (n == 1) {
            return -1;
        }
        int virtual = rank - extra;
        int partnerVirtual = virtual ^ 1;
        return partnerVirtual < extra ? partnerVirtual * 2 + 1 : partnerVirtual + extra;
    }

    /** The tag of the message to {@link #firstPeer}. */
    static long firstTag(int rank, int n) {
        int extra = n - Integer.highestOneBit(n);
        return rank < 2 * extra ? tag(FOLD, 0, 0) : tag(ROUND, 0, 0);
    }

    private static Future<Void> exchange(CollectiveOp op, int partner, long tag, Region buf,
                                         ReduceOp reduceOp, DType dtype) {
        // Device memory reduces from native memory without a further copy; host memory from a cheap heap array.
        if (buf.isHost()) {
            Region theirs = Region.host(op.scratch(buf.byteSize()));
            Future<Void> recv = op.recvInto(partner, tag, theirs);
            Future<Void> send = op.send(partner, tag, buf);
            return Future.all(send, recv).compose(v -> op.reduce(buf, theirs, reduceOp, dtype));
        }
        // Device memory: the send stages the buffer's bytes before anything changes it, so the partner's
        // message can be reduced into the device buffer as it arrives.
        Future<Void> send = op.send(partner, tag, buf);
        Future<Void> recv = send.compose(v -> op.recvReduce(partner, tag, buf, reduceOp, dtype));
        return recv;
    }
}
