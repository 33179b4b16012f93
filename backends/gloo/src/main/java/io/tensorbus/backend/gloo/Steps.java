package io.tensorbus.backend.gloo;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.IntFunction;

/**
 * Runs the iterations of a gloo algorithm one after another, as gloo's loops do on their thread: iteration
 * {@code i + 1} starts when the future of iteration {@code i} completes. Iterations whose future is already
 * complete follow in the same loop rather than in nested callbacks, so long rings do not deepen the stack.
 */
final class Steps {
    private Steps() {
    }

    /** Runs {@code step(from)} .. {@code step(to - 1)} in order; fails with the first failure. */
    static Future<Void> run(int from, int to, IntFunction<Future<Void>> step) {
        Promise<Void> done = Promise.promise();
        next(from, to, step, done);
        return done.future();
    }

    private static void next(int from, int to, IntFunction<Future<Void>> step, Promise<Void> done) {
        for (int i = from; i < to; i++) {
            Future<Void> f;
            try {
                f = step.apply(i);
            } catch (RuntimeException e) {
                done.tryFail(e);
                return;
            }
            if (!f.isComplete()) {
                int following = i + 1;
                f.onComplete(ar -> {
                    if (ar.failed()) {
                        done.tryFail(ar.cause());
                    } else {
                        next(following, to, step, done);
                    }
                });
                return;
            }
            if (f.failed()) {
                done.tryFail(f.cause());
                return;
            }
        }
        done.tryComplete();
    }

    /** Completes when every one of {@code futures} (nulls skipped) has; fails with the first failure. */
    static Future<Void> all(Iterable<Future<Void>> futures) {
        Future<Void> all = Future.succeededFuture();
        for (Future<Void> f : futures) {
            if (f != null) {
                all = all.compose(v -> f);
            }
        }
        return all;
    }

    /** An array of {@code n} futures, all null. */
    @SuppressWarnings("unchecked")
    static Future<Void>[] futures(int n) {
        return (Future<Void>[]) new Future<?>[n];
    }

    /** {@code value} rounded up to a multiple of {@code multiple}. */
    static long roundUp(long value, long multiple) {
        return (value + multiple - 1) / multiple * multiple;
    }
}
