package io.tensorbus.autograd;

/** Returned by every hook registration; {@link #remove()} unregisters the hook (idempotent). */
@FunctionalInterface
public interface RemovableHandle extends AutoCloseable {
    /** Unregisters the hook; calling it again does nothing. */
    void remove();

    /** Same as {@link #remove()}, so a hook can live in a try-with-resources block. */
    @Override
    default void close() {
        remove();
    }
}
