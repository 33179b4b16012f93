package io.tensorbus.distributed.rpc;

/**
 * The global id of a remote value (PyTorch's {@code RRefId}): the rank of the worker that created the
 * reference and a number unique on that worker. Every RRef to one value, on every worker, carries it.
 *
 * @param createdOn rank of the worker that called {@code remote} or {@code RRef.of}
 * @param localId a number that worker never gives out twice
 */
public record RRefId(int createdOn, long localId) {
    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException for a negative rank or number
     */
    public RRefId {
        if (createdOn < 0 || localId < 0) {
            throw new IllegalArgumentException("an RRefId needs a rank and a number >= 0, got (" + createdOn + ", "
                    + localId + ")");
        }
    }

    @Override
    public String toString() {
        return "RRefId(" + createdOn + ", " + localId + ")";
    }
}
