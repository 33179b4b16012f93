package io.tensorbus.io;

/**
 * Bytes given to {@link ObjectCodec#decode(byte[])} are not a valid encoding, or name a type the decoding
 * codec does not know: a truncated or overlong value, an unknown tag, a record or enum name that was not
 * registered, nesting deeper than {@link ObjectCodec#MAX_DEPTH}, bytes left after the value, or a record
 * constructor that rejected the decoded components.
 *
 * <p>The message says what was wrong and where ({@code at byte 17: string length 1000000 needs 1000000
 * bytes but only 5 are left}). It is unchecked because decoding usually runs inside a future's callback,
 * where a failure becomes the failed future; nothing a caller could do differs from any other bad input.
 */
public class CodecException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The byte offset of the problem in the input, or -1 when it is not about one position. */
    private final long offset;

    /**
     * Creates the exception.
     *
     * @param offset the byte offset of the problem in the input, or -1
     * @param problem what was wrong and, where it helps, what is allowed
     */
    public CodecException(long offset, String problem) {
        super(format(offset, problem));
        this.offset = offset;
    }

    /**
     * Creates the exception with the failure that caused it (a record constructor's exception, for instance).
     *
     * @param offset the byte offset of the problem in the input, or -1
     * @param problem what was wrong
     * @param cause the underlying failure
     */
    public CodecException(long offset, String problem, Throwable cause) {
        super(format(offset, problem), cause);
        this.offset = offset;
    }

    /** The byte offset of the problem in the decoded input, or -1 when it is not about one position. */
    public long offset() {
        return offset;
    }

    private static String format(long offset, String problem) {
        return offset < 0 ? problem : "at byte " + offset + ": " + problem;
    }
}
