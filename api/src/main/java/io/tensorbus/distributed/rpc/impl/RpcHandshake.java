package io.tensorbus.distributed.rpc.impl;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The mutual proof of the shared secret at the start of every connection. The caller opens with a fresh
 * nonce; the acceptor answers with its own nonce and {@code HMAC-SHA256(secret, "acceptor" | caller nonce |
 * caller | acceptor)}; the caller checks that, then answers {@code HMAC-SHA256(secret, "caller" | acceptor
 * nonce | caller | acceptor)}. So neither side talks calls with a process that lacks the secret, and a
 * proof cannot be replayed on another connection or in the other role. A job without a secret uses a fixed
 * key, so a worker with a secret and one without still refuse each other.
 */
public final class RpcHandshake {
    /** Nonce bytes. */
    public static final int NONCE_BYTES = 32;
    /** The role of the acceptor's proof. */
    public static final String ACCEPTOR = "acceptor";
    /** The role of the caller's proof. */
    public static final String CALLER = "caller";
    private static final byte[] NO_SECRET = "tensorbus-rpc-without-secret".getBytes(StandardCharsets.UTF_8);
    private static final SecureRandom RANDOM = new SecureRandom();

    private RpcHandshake() {
    }

    /** A fresh nonce. */
    public static byte[] nonce() {
        byte[] c = new byte[NONCE_BYTES];
        RANDOM.nextBytes(c);
        return c;
    }

    /** The proof of {@code role} over the other side's {@code nonce}. */
    public static byte[] proof(byte[] secret, String role, byte[] nonce, String caller, String acceptor) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.length == 0 ? NO_SECRET : secret, "HmacSHA256"));
            for (byte[] part : new byte[][] {role.getBytes(StandardCharsets.UTF_8), nonce,
                    caller.getBytes(StandardCharsets.UTF_8), acceptor.getBytes(StandardCharsets.UTF_8)}) {
                mac.update(part);
                mac.update((byte) 0);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JDK", e);
        }
    }

    /** Whether {@code proof} is the proof of {@code role}, compared in constant time. */
    public static boolean verify(byte[] secret, String role, byte[] nonce, String caller, String acceptor,
            byte[] proof) {
        return proof != null && nonce != null && nonce.length == NONCE_BYTES
                && MessageDigest.isEqual(proof(secret, role, nonce, caller, acceptor), proof);
    }
}
