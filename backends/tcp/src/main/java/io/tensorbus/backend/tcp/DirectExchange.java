package io.tensorbus.backend.tcp;

import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;

import static io.tensorbus.backend.tcp.CollectiveOp.tag;

/**
 * The collectives whose data goes straight between the pairs that own it: gather (everyone to the root),
 * scatter (the root to everyone) and all-to-all (every pair both ways). One message per pair; the
 * receiving side parks a large payload until its buffer is posted, so nothing is copied twice.
 */
final class DirectExchange {
    private DirectExchange() {
    }

    static Future<Void> gather(CollectiveOp op, List<Region> outputs, Region input, int root) {
        int r = op.rank();
        if (r != root) {
            return op.send(root, tag(0, 0, 0), input);
        }
        List<Future<Void>> all = new ArrayList<>();
        all.add(op.copy(input, outputs.get(r)));
        for (int p = 0; p < op.size(); p++) {
            if (p != r) {
                all.add(op.recvInto(p, tag(0, 0, 0), outputs.get(p)));
            }
        }
        return Future.all(all).mapEmpty();
    }

    static Future<Void> scatter(CollectiveOp op, Region output, List<Region> inputs, int root) {
        int r = op.rank();
        if (r != root) {
            return op.recvInto(root, tag(0, 0, 0), output);
        }
        List<Future<Void>> all = new ArrayList<>();
        all.add(op.copy(inputs.get(r), output));
        for (int p = 0; p < op.size(); p++) {
            if (p != r) {
                all.add(op.send(p, tag(0, 0, 0), inputs.get(p)));
            }
        }
        return Future.all(all).mapEmpty();
    }

    static Future<Void> allToAll(CollectiveOp op, List<Region> outputs, List<Region> inputs) {
        int r = op.rank();
        int n = op.size();
        List<Future<Void>> all = new ArrayList<>();
        all.add(op.copy(inputs.get(r), outputs.get(r)));
        for (int k = 1; k < n; k++) {
            // Pair off in rounds (send to r+k, receive from r-k) so that no rank is flooded by all at once.
            all.add(op.recvInto((r - k + n) % n, tag(0, 0, 0), outputs.get((r - k + n) % n)));
            all.add(op.send((r + k) % n, tag(0, 0, 0), inputs.get((r + k) % n)));
        }
        return Future.all(all).mapEmpty();
    }
}
