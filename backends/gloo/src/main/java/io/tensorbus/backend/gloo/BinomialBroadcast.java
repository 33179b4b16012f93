package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo's broadcast ({@code gloo/broadcast.cc}): a binomial tree over ranks renumbered so the root is 0; in round
 * {@code i} the ranks below {@code 2^i} send the whole buffer to their partner {@code 2^i} above, and a rank
 * forwards only after its own receive has completed.
 */
final class BinomialBroadcast {
    private BinomialBroadcast() {
    }

    /** Copies the root's {@code buffer} into every rank's. */
    static Future<Void> run(GlooContext context, MemorySegment buffer, int root, long slot) {
        int size = context.size();
        int vrank = (context.rank() + size - root) % size;
        int dim = log2ceil(size);
        List<Future<Void>> sends = new ArrayList<>();
        int[] mask = {(1 << dim) - 1};
        return Steps.run(0, dim, i -> {
            mask[0] ^= 1 << i;
            int vpeer = vrank ^ (1 << i);
            if ((vrank & mask[0]) != 0 || vpeer >= size) {
                return Future.succeededFuture();
            }
            int peer = (vpeer + root) % size;
            if ((vrank & (1 << i)) == 0) {
                sends.add(context.send(peer, slot, buffer));
                return Future.succeededFuture();
            }
            return context.recv(peer, slot, buffer);
        }).compose(v -> Steps.all(sends));
    }

    /** gloo's {@code log2ceil}: the smallest {@code d} with {@code 2^d >= value}. */
    static int log2ceil(int value) {
        return value <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(value - 1);
    }
}
