package io.tensorbus.distributed.rpc;

/**
 * The id of one user's reference to a remote value (PyTorch's {@code ForkId}): each user RRef, on each
 * worker, has its own, so the owner can count the users and tell a repeated control message from a new
 * one.
 *
 * @param createdOn rank of the worker that made the fork (the one that called {@code remote}, or the one
 *     that passed the RRef on)
 * @param localId a number that worker never gives out twice
 */
public record ForkId(int createdOn, long localId) {
    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException for a negative rank or number
     */
    public ForkId {
        if (createdOn < 0 || localId < 0) {
            throw new IllegalArgumentException("a ForkId needs a rank and a number >= 0, got (" + createdOn + ", "
                    + localId + ")");
        }
    }

    @Override
    public String toString() {
        return "ForkId(" + createdOn + ", " + localId + ")";
    }
}
