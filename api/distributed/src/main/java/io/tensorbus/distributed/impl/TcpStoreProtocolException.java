package io.tensorbus.distributed.impl;

/**
 * A {@code TcpStore} frame broke the protocol (a length past the frame's end, an unknown command, bad UTF-8...).
 * The connection that sent it is closed: after a malformed frame, the byte stream cannot be trusted.
 */
public final class TcpStoreProtocolException extends RuntimeException {

    /**
     * A protocol error.
     *
     * @param message what was wrong, naming the field and the sizes involved
     */
    public TcpStoreProtocolException(String message) {
        super(message);
    }
}
