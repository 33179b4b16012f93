package io.tensorbus.backend.tcp;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * The dissemination barrier (Hensgen, Finkel and Manber): in round k every rank signals rank {@code r + 2^k}
 * and waits for rank {@code r - 2^k}; after ceil(log2 n) rounds every rank has heard from every other,
 * directly or not. Messages are empty.
 */
final class DisseminationBarrier {
    private static final Region NOTHING = Region.host(MemorySegment.NULL);

    private DisseminationBarrier() {
    }

    static Future<Void> run(CollectiveOp op) {
        int n = op.size();
        int r = op.rank();
        Future<Void> f = Future.succeededFuture();
        int round = 0;
        for (int d = 1; d < n; d <<= 1, round++) {
            int to = (r + d) % n;
            int from = (r - d + n) % n;
            long tag = tag(0, round, 0);
            f = f.compose(v -> Future.all(op.send(to, tag, NOTHING),
                    op.recvInto(from, tag, NOTHING)).mapEmpty());
        }
        return f;
    }
}
