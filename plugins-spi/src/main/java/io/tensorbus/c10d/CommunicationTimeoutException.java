package io.tensorbus.c10d;

/**
 * An operation did not finish within its group's timeout. The message is a stall report: the op, the group,
 * the sequence number and which ranks never joined the op ({@link #missingRanks()}), as far as the
 * responding peers could tell.
 */
public class CommunicationTimeoutException extends CommunicationException {
    private final int[] missingRanks;

    /**
     * @param group the group's name
     * @param sequence the collective's sequence number, or -1 for point-to-point
     * @param message the stall report
     * @param missingRanks the group ranks that had not started the op (empty when unknown)
     */
    public CommunicationTimeoutException(String group, long sequence, String message, int[] missingRanks) {
        super(group, sequence, message, null);
        this.missingRanks = missingRanks.clone();
    }

    /** The group ranks that had not started the timed-out op when it expired (a copy). */
    public int[] missingRanks() {
        return missingRanks.clone();
    }

    @Override
    public CommunicationException forOperation(String group, long sequence, String message) {
        return new CommunicationTimeoutException(group, sequence, message, missingRanks);
    }
}
