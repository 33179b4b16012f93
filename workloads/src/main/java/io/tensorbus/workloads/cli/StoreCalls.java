package io.tensorbus.workloads.cli;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The launcher's blocking calls to the store it meets the other nodes at: each may take {@link #limit()}; one that
 * fails or takes longer means the store is gone ({@link StoreLostException}).
 */
final class StoreCalls {
    /** How long one call to a {@code TcpStore} may take. */
    static final Duration TCP = Duration.ofSeconds(5);

    /**
     * How long one call to a Hazelcast-kept store may take: longer than Hazelcast takes to declare a member lost
     * (10 s) and move its data, during which calls stall.
     */
    static final Duration CLUSTER = Duration.ofSeconds(40);

    private final Duration limit;

    /** Calls that may each take {@code limit}. */
    StoreCalls(Duration limit) {
        this.limit = limit;
    }

    /** How long one call may take. */
    Duration limit() {
        return limit;
    }

    /**
     * The result of {@code f}.
     *
     * @param what what the call was for, for the message
     * @throws StoreLostException when it failed or did not answer in time
     */
    <T> T call(Future<T> f, String what) {
        try {
            return f.await(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            String why = e instanceof TimeoutException ? "no answer within " + limit.toSeconds() + " s"
                    : String.valueOf(e.getMessage());
            throw new StoreLostException("the store stopped answering while " + what + ": " + why, e);
        }
    }

    /** The result of {@code f}, or null when it failed or did not answer in time. */
    <T> T quietly(Future<T> f) {
        try {
            return f.await(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            return null;
        }
    }

    /** The store a launcher meets the others at stopped answering: its host died or was cut off. */
    static final class StoreLostException extends RuntimeException {
        StoreLostException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
