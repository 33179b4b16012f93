package io.tensorbus.distributed.rpc;

/**
 * A worker of an RPC job (PyTorch's {@code WorkerInfo}): its unique name and its id, which is its rank.
 *
 * @param name the worker's name, unique in the job
 * @param id the worker's rank, 0 to worldSize-1
 */
public record WorkerInfo(String name, int id) {
    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException for a blank name, a name with white space or an id below 0
     */
    public WorkerInfo {
        RpcChecks.name(name);
        if (id < 0) {
            throw new IllegalArgumentException("worker id must be >= 0, got " + id);
        }
    }

    @Override
    public String toString() {
        return name + " (rank " + id + ")";
    }
}
