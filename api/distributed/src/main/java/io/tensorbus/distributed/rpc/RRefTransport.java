package io.tensorbus.distributed.rpc;

/**
 * What the RRef protocol needs of its agent: sending its messages, and knowing when to stop retrying them
 * (the agent closed, or a worker is lost for good).
 */
interface RRefTransport extends RpcCaller {
    /** True once the agent has shut down. */
    boolean isClosed();

    /** True when {@code worker} is gone for good: messages to it are not retried. */
    boolean isLost(WorkerInfo worker);

    /** Runs {@code action} when the agent closes. */
    void onClose(Runnable action);
}
