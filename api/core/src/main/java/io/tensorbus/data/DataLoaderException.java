package io.tensorbus.data;

/**
 * A batch could not be delivered by a {@link DataLoader}: loading it failed (the cause is the dataset's or the
 * collate function's exception), or a wait for it timed out, or the iterator was closed. The message names the
 * epoch, the batch index and what went wrong.
 */
public class DataLoaderException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int epoch;
    private final int batchIndex;

    /**
     * Creates the exception.
     *
     * @param epoch the epoch of the iterator
     * @param batchIndex the position of the batch within the epoch
     * @param message what went wrong
     * @param cause the underlying failure, or null
     */
    public DataLoaderException(int epoch, int batchIndex, String message, Throwable cause) {
        super("epoch " + epoch + ", batch " + batchIndex + ": " + message, cause);
        this.epoch = epoch;
        this.batchIndex = batchIndex;
    }

    /** The epoch of the iterator that failed. */
    public int epoch() {
        return epoch;
    }

    /** The position within the epoch of the batch that failed. */
    public int batchIndex() {
        return batchIndex;
    }
}
