package io.tensorbus.distributed.autograd;

/**
 * A distributed backward pass failed: a worker's part of it raised, a worker was lost, or a deadline passed. The
 * message names the context and the worker; the cause is the failure as that worker or the RPC layer saw it.
 */
public class DistAutogradException extends RuntimeException {
    /** A failure described by {@code message}, caused by {@code cause}. */
    public DistAutogradException(String message, Throwable cause) {
        super(message, cause);
    }
}
