package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;

/**
 * gloo's gather ({@code gloo/gather.cc}) and scatter ({@code gloo/scatter.cc}): the root receives from, or sends
 * to, every other rank directly, one message each.
 */
final class RootGather {
    private RootGather() {
    }

    /**
     * Gathers every rank's {@code input} into the root's {@code flat} ({@code size x input} bytes, rank order);
     * {@code flat} is ignored elsewhere.
     */
    static Future<Void> gather(GlooContext context, MemorySegment flat, MemorySegment input, int root, long slot) {
        if (context.rank() != root) {
            return context.send(root, slot, input);
        }
        long chunk = input.byteSize();
        Future<Void> all = Future.succeededFuture();
        for (int r = 0; r < context.size(); r++) {
            if (r != root) {
                Future<Void> received = context.recv(r, slot, flat.asSlice(r * chunk, chunk));
                all = all.compose(v -> received);
            }
        }
        MemorySegment.copy(input, 0, flat, root * chunk, chunk);
        return all;
    }

    /** Sends the root's {@code inputs[r]} to rank r, which receives it into {@code output}. */
    static Future<Void> scatter(GlooContext context, MemorySegment output, MemorySegment[] inputs, int root,
                                long slot) {
        if (context.rank() != root) {
            return context.recv(root, slot, output);
        }
        Future<Void> all = Future.succeededFuture();
        for (int r = 0; r < context.size(); r++) {
            if (r != root) {
                Future<Void> sent = context.send(r, slot, inputs[r]);
                all = all.compose(v -> sent);
            }
        }
        MemorySegment.copy(inputs[root], 0, output, 0, output.byteSize());
        return all;
    }
}
