package io.tensorbus.distributed.impl;

import io.tensorbus.DType;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * c10d's {@code monitored_barrier}: every rank reports to rank 0 with an empty message, and rank 0 waits for each
 * within the timeout, then releases them; the ranks that did not arrive are named in rank 0's failure. Runs on
 * the group's own reserved tags, so it never meets the user's messages.
 */
public final class MonitoredBarrier {
    /** Tags below 0 are reserved for the group's own messages. */
    private static final int ARRIVE_TAG = -2;
    private static final int RELEASE_TAG = -3;

    private MonitoredBarrier() {
    }

    /**
     * Runs the barrier on {@code backend}, the group named {@code group}.
     *
     * @param waitAllRanks name every missing rank, not only the first
     */
    public static Future<Void> run(Backend backend, String group, Vertx vertx, Duration timeout, boolean waitAllRanks) {
        DeviceBuffer empty = DeviceBuffer.host(MemorySegment.NULL, DType.BOOL, 0);
        if (backend.rank() != 0) {
            return backend.send(empty, 0, ARRIVE_TAG)
                    .compose(v -> within(vertx, group, backend.recv(empty, 0, RELEASE_TAG), timeout,
                            "monitoredBarrier release from rank 0"))
                    .mapEmpty();
        }
        List<Future<Integer>> arrivals = new ArrayList<>();
        for (int r = 1; r < backend.size(); r++) {
            arrivals.add(within(vertx, group, backend.recv(empty, r, ARRIVE_TAG), timeout, "rank " + r));
        }
        return Future.join(arrivals).transform(ar -> {
            TreeSet<Integer> missing = new TreeSet<>();
            Throwable lost = null;
            for (int r = 1; r < backend.size(); r++) {
                Future<Integer> arrival = arrivals.get(r - 1);
                if (arrival.failed()) {
                    missing.add(r);
                    if (lost == null && !(arrival.cause() instanceof CommunicationTimeoutException)) {
                        lost = arrival.cause();
                    }
                }
            }
            if (!missing.isEmpty()) {
                return Future.failedFuture(missed(group, missing, waitAllRanks, timeout, lost));
            }
            List<Future<Void>> releases = new ArrayList<>();
            for (int r = 1; r < backend.size(); r++) {
                releases.add(backend.send(empty, r, RELEASE_TAG));
            }
            return Future.all(releases).mapEmpty();
        });
    }

    /**
     * The failure of a barrier that {@code missing} did not reach: a timeout when each of them was waited for in vain,
     * else the first other cause (a rank that left the group, a closed connection), named as such.
     */
    private static CommunicationException missed(String group, TreeSet<Integer> missing, boolean waitAllRanks,
            Duration timeout, Throwable lost) {
        Object named = waitAllRanks ? missing : missing.first();
        String ranks = "monitoredBarrier in group '" + group + "': rank" + (waitAllRanks ? "s " : " ") + named;
        if (lost != null) {
            return new CommunicationException(group, -1, ranks + " did not reach the barrier: " + lost.getMessage(),
                    lost);
        }
        return new CommunicationTimeoutException(group, -1, ranks + " did not reach the barrier within " + timeout,
                missing.stream().mapToInt(Integer::intValue).toArray());
    }

    private static <T> Future<T> within(Vertx vertx, String group, Future<T> f, Duration limit, String what) {
        Promise<T> p = Promise.promise();
        long timer = vertx.setTimer(limit.toMillis(), id -> p.tryFail(new CommunicationTimeoutException(group, -1,
                what + " did not arrive within " + limit, new int[0])));
        f.onComplete(ar -> {
            vertx.cancelTimer(timer);
            if (ar.succeeded()) {
                p.tryComplete(ar.result());
            } else {
                p.tryFail(ar.cause());
            }
        });
        return p.future();
    }
}
