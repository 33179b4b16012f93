package io.tensorbus.distributed.rpc.impl;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proof of the shared secret at the start of every connection: the acceptor sends a fresh random
 * challenge, the caller answers {@code HMAC-SHA256(secret, challenge | caller | acceptor)}. A job without
 * a secret uses a fixed key, so a worker with a secret and one without still refuse each other.
 */
public final class RpcHandshake {
    /** Challenge bytes. */
    public static final int CHALLENGE_BYTES = 32;
    private static final byte[] NO_SECRET = "tensorbus-rpc-without-secret".getBytes(StandardCharsets.UTF_8);
    private static final SecureRandom RANDOM = new SecureRandom();

    private RpcHandshake() {
    }

    /** A fresh challenge. */
    public static byte[] challenge() {
        byte[] c = new byte[CHALLENGE_BYTES];
        RANDOM.nextBytes(c);
        return c;
    }

    /** The caller's answer to {@code challenge}. */
    public static byte[] proof(byte[] secret, byte[] challenge, String caller, String acceptor) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.length == 0 ? NO_SECRET : secret, "HmacSHA256"));
            mac.update(challenge);
            mac.update((byte) 0);
            mac.update(caller.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            mac.update(acceptor.getBytes(StandardCharsets.UTF_8));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JDK", e);
        }
    }

    /** Whether {@code proof} answers {@code challenge}, compared in constant time. */
    public static boolean verify(byte[] secret, byte[] challenge, String caller, String acceptor, byte[] proof) {
        return proof != null && MessageDigest.isEqual(proof(secret, challenge, caller, acceptor), proof);
    }
}
