package io.tensorbus.c10d;

/**
 * A communication operation failed: a peer was lost, peers disagreed, a frame was malformed or the deadline
 * passed. The message names the operation, the group, the operation's sequence number in the group and the
 * ranks involved, so that the failing call can be found on every rank.
 */
public class CommunicationException extends RuntimeException {
    private final String group;
    private final long sequence;

    /**
     * @param group the process group's name
     * @param sequence the collective's sequence number in the group, or -1 for point-to-point and set-up
     * @param message what happened, naming the op and the ranks
     * @param cause the underlying failure, or null
     */
    public CommunicationException(String group, long sequence, String message, Throwable cause) {
        super(message, cause);
        this.group = group;
        this.sequence = sequence;
    }

    /** The name of the group the failed operation ran in. */
    public String group() {
        return group;
    }

    /** The collective's sequence number in its group, or -1 for point-to-point and set-up. */
    public long sequence() {
        return sequence;
    }

    /**
     * The failure of another operation that this one caused, for backends that fail every pending operation of a
     * broken group: the same kind of exception (a lost peer stays a {@link PeerLostException} naming that peer, a
     * timeout keeps its missing ranks), with the other operation's sequence number and message, so that callers
     * can react to the kind whichever operation they waited on.
     *
     * @param group the group's name
     * @param sequence the other operation's sequence number, or -1
     * @param message what failed, naming the other operation
     */
    public CommunicationException forOperation(String group, long sequence, String message) {
        return new CommunicationException(group, sequence, message, this);
    }
}
