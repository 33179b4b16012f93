package io.tensorbus.c10d;

/**
 * A connection was refused by the secret handshake ({@code io.tensorbus.spi.support.SecretHandshake}): a side could not
 * prove the job's secret, had a secret when the other had none (or the reverse), spoke another channel, or broke
 * the exchange. The message says which and, where it helps, how to give every process the same secret.
 */
public class AuthenticationException extends RuntimeException {
    /** @param message what was refused and why */
    public AuthenticationException(String message) {
        super(message);
    }
}
