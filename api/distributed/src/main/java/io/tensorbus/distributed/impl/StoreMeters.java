package io.tensorbus.distributed.impl;

import io.tensorbus.internal.distributed.Meters;
import io.vertx.core.Future;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The timer of the requests of the stores that keep their keys themselves ({@code HashStore}, {@code FileStore},
 * {@code ClusterStore}): {@value TcpStoreClient#STORE_METER} tagged {@code store} (its kind) and {@code op}, as
 * {@code TcpStoreClient} times the TcpStore's requests on the wire. A store that delegates ({@code PrefixStore})
 * is timed by the store it delegates to.
 */
public final class StoreMeters {
    private static final Map<String, Meters.Operation> BY_STORE_AND_OP = new ConcurrentHashMap<>();

    private StoreMeters() {
    }

    /**
     * Runs {@code request}, operation {@code op} of a {@code store} kind of store, timing it while metrics are on
     * ({@code store} null: never).
     */
    public static <T> Future<T> timed(String store, String op, Supplier<Future<T>> request) {
        long begin = store == null ? 0 : Meters.start();
        Future<T> f = request.get();
        if (begin != 0) {
            Meters.Operation m = BY_STORE_AND_OP.computeIfAbsent(store + ' ' + op, k -> Meters.operation(
                    TcpStoreClient.STORE_METER, false, "store", store, "op", op));
            f.onComplete(r -> m.record(begin, 0, r.cause()));
        }
        return f;
    }
}
