package io.tensorbus.c10d;

/**
 * The connection to a member of the group closed or carried a malformed frame, so the group cannot finish
 * any operation that needs that member. Every pending and later operation of the group fails with it.
 */
public class PeerLostException extends CommunicationException {
    private final int peer;

    /**
     * @param group the group's name
     * @param sequence the sequence number of the failed collective, or -1
     * @param peer the group rank whose connection was lost
     * @param message what was lost and why
     * @param cause the underlying failure, or null
     */
    public PeerLostException(String group, long sequence, int peer, String message, Throwable cause) {
        super(group, sequence, message, cause);
        this.peer = peer;
    }

    /** The group rank whose connection was lost. */
    public int peer() {
        return peer;
    }

    @Override
    public CommunicationException forOperation(String group, long sequence, String message) {
        return new PeerLostException(group, sequence, peer, message, this);
    }
}
