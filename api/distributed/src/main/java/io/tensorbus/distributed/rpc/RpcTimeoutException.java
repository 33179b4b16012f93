package io.tensorbus.distributed.rpc;

/** A call did not complete within its timeout; the function may still run on the callee. */
public final class RpcTimeoutException extends RpcException {
    private static final long serialVersionUID = 1L;

    /** An exception naming the call, the worker and the timeout. */
    public RpcTimeoutException(String message) {
        super(message);
    }
}
