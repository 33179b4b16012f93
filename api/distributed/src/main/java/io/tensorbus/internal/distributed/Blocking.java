package io.tensorbus.internal.distributed;

import io.tensorbus.c10d.CommunicationException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The blocking forms of the tutorial ({@code send}, {@code recv}): wait for a future off the event loop,
 * with a deadline, and rethrow its failure unwrapped.
 */
public final class Blocking {
    private Blocking() {
    }

    /**
     * Fails when this thread must not block ({@code what} names the blocking operation).
     *
     * @throws IllegalStateException on a Vert.x event-loop thread
     */
    public static void checkMayBlock(String what) {
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException(what + " blocks, and this is a Vert.x event-loop thread, which must never "
                    + "block: use the Future-returning form and compose it");
        }
    }

    /**
     * Waits for {@code future} up to {@code deadline}.
     *
     * @throws IllegalStateException on a Vert.x event-loop thread, which must never block
     * @throws CommunicationException (or the future's own runtime exception) when it fails or the deadline passes
     */
    public static <T> T await(Future<T> future, Duration deadline, String what) {
        checkMayBlock(what);
        try {
            return future.toCompletionStage().toCompletableFuture().get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new CommunicationException(null, -1, what + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            throw new CommunicationException(null, -1, what + " did not finish within " + deadline, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommunicationException(null, -1, what + " was interrupted", e);
        }
    }
}
