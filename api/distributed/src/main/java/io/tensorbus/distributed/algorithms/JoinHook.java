package io.tensorbus.distributed.algorithms;

/**
 * What a {@link Joinable} does on a rank that has joined ({@code torch.distributed.algorithms.JoinHook}):
 * {@link #mainHook()} once for every iteration that some rank still trains, running the collectives of one such
 * iteration, and {@link #postHook(boolean)} once all ranks have joined.
 */
public interface JoinHook {
    /** Shadows one iteration of the ranks still training. Blocks. */
    default void mainHook() {
    }

    /**
     * Runs once every rank has joined.
     *
     * @param isLastJoiner true on the ranks that joined last (they trained longest)
     */
    default void postHook(boolean isLastJoiner) {
    }
}
