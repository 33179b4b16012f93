package io.tensorbus.distributed.rpc;

/**
 * The called function failed on the remote worker: the remote exception's class name, message and
 * stack trace (as text; no remote class is ever instantiated here), and the worker it ran on.
 */
public final class RemoteException extends RpcException {
    private static final long serialVersionUID = 1L;

    private final String worker;
    private final String remoteType;
    private final String remoteMessage;
    private final String remoteStack;

    /**
     * @param worker the name of the worker the function ran on
     * @param function the called function's name
     * @param remoteType the remote exception's class name
     * @param remoteMessage its message (may be null)
     * @param remoteStack its stack trace as text
     */
    public RemoteException(String worker, String function, String remoteType, String remoteMessage,
            String remoteStack) {
        super("'" + function + "' failed on worker " + worker + ": " + remoteType
                + (remoteMessage == null ? "" : ": " + remoteMessage));
        this.worker = worker;
        this.remoteType = remoteType;
        this.remoteMessage = remoteMessage;
        this.remoteStack = remoteStack;
    }

    /** The name of the worker where the function failed. */
    public String worker() {
        return worker;
    }

    /** The remote exception's class name, such as {@code java.lang.IllegalArgumentException}. */
    public String remoteType() {
        return remoteType;
    }

    /** The remote exception's message, or null. */
    public String remoteMessage() {
        return remoteMessage;
    }

    /** The remote stack trace as text. */
    public String remoteStack() {
        return remoteStack;
    }
}
