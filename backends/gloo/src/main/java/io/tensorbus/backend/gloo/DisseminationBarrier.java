package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's barrier ({@code gloo/barrier.cc}): a dissemination barrier of empty messages; in the round of distance
 * {@code d} (1, 2, 4, ...) every rank receives from {@code rank - d} and sends to {@code rank + d}.
 */
final class DisseminationBarrier {
    private DisseminationBarrier() {
    }

    /** Completes once every rank of the context has entered the barrier with this slot. */
    static Future<Void> run(GlooContext context, long slot) {
        int size = context.size();
        int rounds = BinomialBroadcast.log2ceil(size);
        return Steps.run(0, rounds, i -> {
            int d = 1 << i;
            Future<Void> recv = context.recv((size + context.rank() - d) % size, slot, MemorySegment.NULL);
            Future<Void> send = context.send((context.rank() + d) % size, slot, MemorySegment.NULL);
            return recv.compose(v -> send);
        });
    }
}
