package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * gloo's all-to-all ({@code gloo/alltoall.cc}, and {@code alltoallv.cc} for uneven splits, whose messages are the
 * same given the sizes): this rank's own part is copied; then for {@code i = 1 .. size-1} it posts a send of its part
 * for rank {@code rank + i} and a receive of rank {@code rank - i}'s part, in that order, every message on one slot
 * (empty parts travel too, as gloo sends them). ProcessGroupGloo's {@code all_to_all_single} runs it; its
 * {@code all_to_all} of tensor lists does not exist.
 */
final class AllToAll {
    private AllToAll() {
    }

    /**
     * Sends {@code inputs[r]} to rank r and receives rank r's part into {@code outputs[r]}.
     *
     * @throws IllegalArgumentException when this rank's own input and output parts differ in size, as gloo enforces
     */
    static Future<Void> run(GlooContext context, MemorySegment[] outputs, MemorySegment[] inputs, long slot) {
        int me = context.rank();
        int n = context.size();
        if (inputs[me].byteSize() != outputs[me].byteSize()) {
            throw new IllegalArgumentException("all-to-all: rank " + me + " keeps " + inputs[me].byteSize()
                    + " bytes of its own but has room for " + outputs[me].byteSize());
        }
        MemorySegment.copy(inputs[me], 0, outputs[me], 0, outputs[me].byteSize());
        List<Future<Void>> all = new ArrayList<>();
        for (int i = 1; i < n; i++) {
            int to = (me + i) % n;
            int from = (me + n - i) % n;
            all.add(context.send(to, slot, inputs[to]));
            all.add(context.recv(from, slot, outputs[from]));
        }
        return Future.all(all).mapEmpty();
    }
}
