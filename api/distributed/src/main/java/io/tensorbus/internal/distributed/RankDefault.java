package io.tensorbus.internal.distributed;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A default that PyTorch keeps once per process (the default group, the RPC agent), kept once per
 * {@link RankEnvironment#scope() rank scope} instead: the process's, or each rank thread's where ranks run as threads
 * of one JVM. The first value offered in a scope is its default until it is withdrawn.
 *
 * @param <T> what the default is
 */
public final class RankDefault<T> {
    private final Map<Object, T> byScope = new IdentityHashMap<>();

    /** Makes {@code value} the default of {@code scope} (captured where it was asked for) when it has none. */
    public synchronized void offer(Object scope, T value) {
        byScope.putIfAbsent(scope, value);
    }

    /** The default of the calling thread's scope, or null. */
    public synchronized T get() {
        return byScope.get(RankEnvironment.scope());
    }

    /** {@code value} is nobody's default any more. */
    public synchronized void withdraw(T value) {
        byScope.values().removeIf(v -> v == value);
    }
}
