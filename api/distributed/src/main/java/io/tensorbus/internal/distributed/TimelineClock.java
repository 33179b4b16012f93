package io.tensorbus.internal.distributed;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

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
    /** How long a rank waits for rank 0's first answer before it gives up aligning its timeline. */
    static final Duration FIRST_ANSWER = Duration.ofSeconds(10);

    private TimelineClock() {
    }

    /**
     * Runs the exchange for {@code rank} of {@code world} and writes the offset into {@code timeline}; every rank of
     * the job must call it with its own recorder (rank 0 answers, writing offset 0). A side that hears nothing from
     * the other within {@link #FIRST_ANSWER} (the other runs without {@value TimelineRecorder#ENV}) goes on without
     * it, saying so: that rank's timeline is then not aligned.
     *
     * @param timeout how long any later step may wait for the other side
     */
    public static Future<Void> sync(Store store, int rank, int world, TimelineRecorder timeline, Duration timeout) {
        Duration first = timeout.compareTo(FIRST_ANSWER) < 0 ? timeout : FIRST_ANSWER;
        if (rank == 0) {
            timeline.clockOffset(0, 0);
            Future<Void> done = Future.succeededFuture();
            for (int r = 1; r < world; r++) {
                int peer = r;
                done = done.compose(v -> answer(store, peer, timeline, first, timeout));
            }
            return done;
        }
        long[] best = {Long.MAX_VALUE, 0};
        Future<Void> done = unansweredAfter(round(store, key(rank, 0), timeline, first, best));
        for (int k = 1; k < ROUNDS; k++) {
            String key = key(rank, k);
            done = done.compose(v -> round(store, key, timeline, timeout, best));
        }
        return done.onSuccess(v -> timeline.clockOffset(best[1], best[0])).recover(e -> {
            if (!(e instanceof Unanswered)) {
                return Future.failedFuture(e);
            }
            warn("rank 0 did not answer rank " + rank + "'s clock ping within " + first.toMillis() + " ms", rank);
            // The pings rank 0 may still wait for, should it answer late.
            Future<Void> pinged = Future.succeededFuture();
            for (int k = 1; k < ROUNDS; k++) {
                String key = key(rank, k);
                pinged = pinged.compose(v -> store.set(PREFIX + "ping/" + key, bytes(0)));
            }
            return pinged;
        });
    }

    /** Rank 0's side with {@code peer}: answers each of its pings, unless the first does not come in time. */
    private static Future<Void> answer(Store store, int peer, TimelineRecorder timeline, Duration first,
                                       Duration timeout) {
        String key0 = key(peer, 0);
        Future<Void> done = pong(store, key0, timeline, unansweredAfter(ping(store, key0, first)));
        for (int k = 1; k < ROUNDS; k++) {
            String key = key(peer, k);
            done = done.compose(v -> pong(store, key, timeline, ping(store, key, timeout)));
        }
        return done.recover(e -> {
            if (!(e instanceof Unanswered)) {
                return Future.failedFuture(e);
            }
            warn("rank " + peer + " sent no clock ping within " + first.toMillis() + " ms", peer);
            return Future.succeededFuture();
        });
    }

    /** Waits up to {@code timeout} for the ping of round {@code key}. */
    private static Future<Void> ping(Store store, String key, Duration timeout) {
        return store.wait(List.of(PREFIX + "ping/" + key), timeout);
    }

    /** Once {@code pinged}, answers the ping of round {@code key} with rank 0's time. */
    private static Future<Void> pong(Store store, String key, TimelineRecorder timeline, Future<Void> pinged) {
        return pinged.compose(v -> store.set(PREFIX + "pong/" + key, bytes(timeline.now())));
    }

    /** {@code step}, its timeout turned into {@link Unanswered}. */
    private static Future<Void> unansweredAfter(Future<Void> step) {
        return step.recover(e -> Future.failedFuture(e instanceof TimeoutException ? new Unanswered(e) : e));
    }

    private static void warn(String what, int rank) {
        System.err.println("tensorbus: " + what + " (does every rank run with " + TimelineRecorder.ENV + " set?):"
                + " rank " + rank + "'s timeline is not aligned with rank 0's");
    }

    private static String key(int rank, int round) {
        return rank + "/" + round;
    }

    /** The other side did not answer the first exchange in time. */
    private static final class Unanswered extends RuntimeException {
        Unanswered(Throwable cause) {
            super(cause.getMessage(), cause, false, false);
        }
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
