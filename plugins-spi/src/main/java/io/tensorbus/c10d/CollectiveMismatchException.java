package io.tensorbus.c10d;

/**
 * Two ranks issued different collectives at the same position of a group's call sequence (a different op,
 * dtype, shape, reduce op or root). Raised at the first frame that shows it, on the rank that sees it; the
 * message names both calls and both ranks.
 */
public class CollectiveMismatchException extends CommunicationException {
    /**
     * @param group the group's name
     * @param sequence the position in the group's collective sequence
     * @param message both calls and both ranks
     */
    public CollectiveMismatchException(String group, long sequence, String message) {
        super(group, sequence, message, null);
    }

    @Override
    public CommunicationException forOperation(String group, long sequence, String message) {
        return new CollectiveMismatchException(group, sequence, message);
    }
}
