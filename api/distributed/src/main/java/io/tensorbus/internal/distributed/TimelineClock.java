package io.tensorbus.internal.distributed;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Measures each rank's clock against rank 0's through the job's store, as Horovod aligns its timeline: rank R writes
 * its time under a ping key, rank 0 answers with its own under a pong key as soon as it sees the ping, and R takes
 * the offset of the round with the shortest round trip, {@code t0 - (t1 + t2) / 2}. Rank 0 answers the ranks one
 * after the other; {@value #ROUNDS} rounds each. Never blocks: every step is a future of the store.
 */
public final class TimelineClock {
    /** Round trips per rank. */
    static final int ROUNDS = 8;
    private static final String PREFIX = "timeline/clock/";

    private TimelineClock() {
    }

    /**
     * Runs the exchange for {@code rank} of {@code world} and writes the offset into {@code timeline}; every rank of
     * the job must call it with its own recorder (rank 0 answers, writing offset 0).
     *
     * @param timeout how long any one step may wait for the other side
     */
    public static Future<Void> sync(Store store, int rank, int world, TimelineRecorder timeline, Duration timeout) {
        if (rank == 0) {
            timeline.clockOffset(0, 0);
            Future<Void> done = Future.succeededFuture();
            for (int r = 1; r < world; r++) {
                for (int k = 0; k < ROUNDS; k++) {
                    String key = r + "/" + k;
                    done = done.compose(v -> store.wait(List.of(PREFIX + "ping/" + key), timeout))
                            .compose(v -> store.set(PREFIX + "pong/" + key, bytes(timeline.now())));
                }
            }
            return done;
        }
        long[] best = {Long.MAX_VALUE, 0};
        Future<Void> done = Future.succeededFuture();
        for (int k = 0; k < ROUNDS; k++) {
            String key = rank + "/" + k;
            done = done.compose(v -> round(store, key, timeline, timeout, best));
        }
        return done.onSuccess(v -> timeline.clockOffset(best[1], best[0]));
    }

    /** One round trip; keeps in {@code best} the shortest round trip and its offset. */
    private static Future<Void> round(Store store, String key, TimelineRecorder timeline, Duration timeout,
                                      long[] best) {
        long t1 = timeline.now();
        return store.set(PREFIX + "ping/" + key, bytes(t1))
                .compose(v -> store.wait(List.of(PREFIX + "pong/" + key), timeout))
                .compose(v -> store.get(PREFIX + "pong/" + key))
                .map(b -> {
                    long t2 = timeline.now();
                    long t0 = Long.parseLong(new String(b, StandardCharsets.US_ASCII));
                    if (t2 - t1 < best[0]) {
                        best[0] = t2 - t1;
                        best[1] = t0 - (t1 + t2) / 2;
                    }
                    return null;
                });
    }

    private static byte[] bytes(long v) {
        return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
    }
}
