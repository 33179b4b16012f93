package io.tensorbus.mutiny;

import io.smallrye.mutiny.Uni;
import io.tensorbus.distributed.rpc.RRef;
import java.time.Duration;
import java.util.function.Function;

/**
 * Mutiny's view of an {@link RRef}: fetching its value and calling a method of it on its owner, as lazy
 * {@link Uni}s that start when subscribed, once per subscription. The reference itself stays the caller's to
 * close.
 *
 * @param <T> the type of the referenced value
 */
public final class UniRRef<T> {
    private final RRef<T> rref;

    /**
     * Wraps {@code rref}.
     *
     * @throws NullPointerException when {@code rref} is null
     */
    public UniRRef(RRef<T> rref) {
        if (rref == null) {
            throw new NullPointerException("rref");
        }
        this.rref = rref;
    }

    /** The wrapped reference. */
    public RRef<T> rref() {
        return rref;
    }

    /** {@link RRef#toHereAsync()}. */
    public Uni<T> toHere() {
        return UniProcessGroup.uni(rref::toHereAsync);
    }

    /** {@link RRef#toHereAsync(Duration)}. */
    public Uni<T> toHere(Duration timeout) {
        return UniProcessGroup.uni(() -> rref.toHereAsync(timeout));
    }

    /** {@link RRef#rpcAsync(Class, Function)}. */
    public <I, R> Uni<R> rpcAsync(Class<I> type, Function<? super I, R> call) {
        return UniProcessGroup.uni(() -> rref.rpcAsync(type, call));
    }

    /** {@link RRef#rpcAsync(Class, Duration, Function)}. */
    public <I, R> Uni<R> rpcAsync(Class<I> type, Duration timeout, Function<? super I, R> call) {
        return UniProcessGroup.uni(() -> rref.rpcAsync(type, timeout, call));
    }
}
