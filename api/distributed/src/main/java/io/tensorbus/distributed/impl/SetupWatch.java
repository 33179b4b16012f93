package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The set-up of a group or an RPC agent, watched as torchrun's agents share failures: a process whose set-up fails
 * writes why under {@value #FAILED_KEY} in the store they meet at, and every other process polls that key while its
 * own set-up is under way, so that it fails within a poll of the first failure, naming the process and its cause,
 * instead of waiting for a peer that will never come. A store that stops answering (its host is gone) fails the
 * set-up too, and the whole set-up has a deadline.
 */
public final class SetupWatch {
    /** The key, in the store of the group, that holds the first failure of a member's set-up. */
    public static final String FAILED_KEY = "setup/failed";

    /** How long a failing set-up waits for its failure to be written before it fails, in milliseconds. */
    static final long POST_MS = 2000;

    /** How often the failure key is read, in milliseconds. */
    static final long POLL_MS = 200;

    /**
     * How long after {@code limit} the watch fails the set-up by itself: the set-up's own deadline, which can name
     * what it still waited for, comes first.
     */
    static final Duration GRACE = Duration.ofSeconds(5);

    private final Vertx vertx;
    private final Store store;
    private final String group;
    private final String what;
    private final String who;
    private final Promise<Object> result = Promise.promise();
    private final AtomicBoolean polling = new AtomicBoolean();
    private long timer = -1;
    private long deadline = -1;

    private SetupWatch(Vertx vertx, Store store, String group, String what, String who) {
        this.vertx = vertx;
        this.store = store;
        this.group = group;
        this.what = what;
        this.who = who;
    }

    /**
     * Runs {@code setup} under watch.
     *
     * @param store where the members meet (the group's scoped store)
     * @param group the group's name for the exceptions, or null
     * @param what what is set up, for messages ("group 'default'", "the RPC agent")
     * @param who this process, for the failure it may post ("rank 1 (10.0.0.2)")
     * @param limit the set-up's deadline; the watch fails it by itself a few seconds later
     * @param setup starts the set-up
     * @param discard takes a result that arrives after the set-up was failed (to close it)
     * @return the set-up's result, or its failure, or a {@link CommunicationException} naming the member whose
     *     set-up failed first, or the store that stopped answering
     */
    @SuppressWarnings("unchecked")
    public static <T> Future<T> run(Vertx vertx, Store store, String group, String what, String who,
            Duration limit, Supplier<Future<T>> setup, Consumer<T> discard) {
        SetupWatch w = new SetupWatch(vertx, store, group, what, who);
        w.start(limit);
        Future<T> started;
        try {
            started = setup.get();
        } catch (RuntimeException e) {
            started = Future.failedFuture(e);
        }
        started.onComplete(ar -> {
            w.stop();
            if (ar.succeeded()) {
                if (!w.result.tryComplete(ar.result())) {
                    discard.accept(ar.result());
                }
            } else if (!w.result.future().isComplete()) {
                // The others learn of it before this process releases the store (or exits).
                w.post(ar.cause()).onComplete(posted -> w.result.tryFail(ar.cause()));
            }
        });
        return (Future<T>) w.result.future();
    }

    private void start(Duration limit) {
        timer = vertx.setPeriodic(POLL_MS, id -> poll());
        deadline = vertx.setTimer(limit.plus(GRACE).toMillis(), id -> result.tryFail(new CommunicationTimeoutException(
                group, -1, "set-up of " + what + " on " + who + " did not finish within " + limit.toSeconds() + " s",
                new int[0])));
    }

    private void stop() {
        vertx.cancelTimer(timer);
        vertx.cancelTimer(deadline);
    }

    private void poll() {
        if (result.future().isComplete() || !polling.compareAndSet(false, true)) {
            return;
        }
        store.check(List.of(FAILED_KEY))
                .compose(set -> set ? store.get(FAILED_KEY).map(v -> new String(v, StandardCharsets.UTF_8))
                        : Future.<String>succeededFuture(null))
                .onComplete(ar -> {
                    polling.set(false);
                    if (ar.failed()) {
                        fail("the store it meets the others at stopped answering: " + ar.cause().getMessage(),
                                ar.cause());
                    } else if (ar.result() != null) {
                        fail(ar.result(), null);
                    }
                });
    }

    private void fail(String why, Throwable cause) {
        if (result.tryFail(new CommunicationException(group, -1, "set-up of " + what + " on " + who + " failed: "
                + why, cause))) {
            stop();
        }
    }

    /** Tells the others why this set-up failed; the first failure stays. Completes within {@link #POST_MS}. */
    private Future<Void> post(Throwable cause) {
        String text = who + " failed: " + cause.getMessage();
        Promise<Void> posted = Promise.promise();
        long timer = vertx.setTimer(POST_MS, id -> posted.tryComplete());
        // A failed write is fine: the store may be gone with the failure (its host died), which the others see.
        store.compareSet(FAILED_KEY, new byte[0], text.getBytes(StandardCharsets.UTF_8)).onComplete(ar -> {
            vertx.cancelTimer(timer);
            posted.tryComplete();
        });
        return posted.future();
    }
}
