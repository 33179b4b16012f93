package io.tensorbus.io;

import java.io.IOException;

/**
 * A file or byte buffer that claims to hold tensors ({@code .npy}, {@code .npz}, safetensors) is malformed
 * or uses a feature tensorbus does not read.
 *
 * <p>The message names the source (a file, a zip entry, or a description such as {@code <npy bytes>}),
 * what was wrong, and what is allowed, for example
 * {@code bad.npy: unsupported descr '<c8'; supported: <f2, <f4, <f8, ...}. It is an {@link IOException}
 * so that callers who already handle I/O failures handle bad files too.
 */
public class TensorFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The source name, or null when unknown. */
    private final String source;

    /**
     * Creates the exception.
     *
     * @param source the file or buffer that was read, or null when unknown
     * @param problem what was wrong and what is allowed
     */
    public TensorFormatException(String source, String problem) {
        super(format(source, problem));
        this.source = source;
    }

    /**
     * Creates the exception with the lower-level cause (a zip or charset error, for instance).
     *
     * @param source the file or buffer that was read, or null when unknown
     * @param problem what was wrong and what is allowed
     * @param cause the underlying failure
     */
    public TensorFormatException(String source, String problem, Throwable cause) {
        super(format(source, problem), cause);
        this.source = source;
    }

    /** The file or buffer that was read, or null when unknown. */
    public String source() {
        return source;
    }

    private static String format(String source, String problem) {
        return source == null ? problem : source + ": " + problem;
    }
}
