package io.tensorbus.distributed.rpc;

/**
 * A call could not be completed: the worker was lost or refused the connection, a message was
 * malformed, the agent is shut down, or the call timed out ({@link RpcTimeoutException}). A failure inside
 * the called function is a {@link RemoteException} instead.
 */
public class RpcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An exception with a message that names the worker and the call. */
    public RpcException(String message) {
        super(message);
    }

    /** As {@link #RpcException(String)} with the cause. */
    public RpcException(String message, Throwable cause) {
        super(message, cause);
    }
}
