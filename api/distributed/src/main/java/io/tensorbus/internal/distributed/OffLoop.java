package io.tensorbus.internal.distributed;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.Supplier;

/**
 * Runs tensor work that a collective's completion starts on a virtual thread of its own: the completion arrives on
 * the group's event loop, which must never compute, and the thread that issued the collective has moved on.
 */
public final class OffLoop {
    private OffLoop() {
    }

    /** A future of {@code work}'s result, computed on a new virtual thread named {@code name}. */
    public static <T> Future<T> run(String name, Supplier<T> work) {
        Promise<T> done = Promise.promise();
        Thread.ofVirtual().name(name).start(() -> {
            try {
                done.complete(work.get());
            } catch (RuntimeException | Error e) {
                done.fail(e);
            }
        });
        return done.future();
    }
}
