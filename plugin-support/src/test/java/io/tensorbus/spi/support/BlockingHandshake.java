package io.tensorbus.spi.support;

import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The connecting side of {@link SecretHandshake} written again from its documented wire format, on a blocking
 * {@link Socket}: tests use it to play a peer by hand, and since it shares no code with the real one, it
 * checks the format as well.
 */
public final class BlockingHandshake {
    private static final byte[] MAGIC = {'T', 'B', 'S', 'H'};

    private BlockingHandshake() {
    }

    /**
     * Proves {@code secret} on {@code socket} for {@code channel}; returns once the acceptor let it in.
     *
     * @throws AuthenticationException when the acceptor refused (its reason in the message) or proved nothing
     * @throws IOException when the connection broke
     */
    public static void connect(Socket socket, JobSecret secret, String channel) throws IOException {
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        byte[] name = channel.getBytes(StandardCharsets.US_ASCII);
        OutputStream out = socket.getOutputStream();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        ByteBuffer opening = ByteBuffer.allocate(7 + name.length + 32).put(MAGIC).put((byte) 1)
                .put((byte) (secret.isPresent() ? 1 : 0)).put((byte) name.length).put(name).put(nonce);
        out.write(opening.array());
        out.flush();
        readAnswer(in);
        byte[] theirs = in.readNBytes(32);
        byte[] label = "tensorbus-handshake-1".getBytes(StandardCharsets.US_ASCII);
        out.write(secret.isPresent() ? secret.mac(label, "client".getBytes(StandardCharsets.US_ASCII), name, nonce,
                theirs) : new byte[32]);
        out.flush();
        readAnswer(in);
        byte[] proof = in.readNBytes(32);
        if (secret.isPresent() && !MessageDigest.isEqual(proof, secret.mac(label,
                "server".getBytes(StandardCharsets.US_ASCII), name, nonce, theirs))) {
            throw new AuthenticationException("the acceptor proved another secret");
        }
    }

    /** Reads an answer header; throws with the reason of a refusal. */
    private static void readAnswer(DataInputStream in) throws IOException {
        byte[] header = in.readNBytes(8);
        if (header.length < 8 || !Arrays.equals(Arrays.copyOf(header, 4), MAGIC) || header[4] != 1) {
            throw new IOException("not a handshake answer: " + Arrays.toString(header));
        }
        int reason = ByteBuffer.wrap(header, 6, 2).order(ByteOrder.LITTLE_ENDIAN).getShort() & 0xffff;
        if (header[5] != 0) {
            throw new AuthenticationException("refused: " + new String(in.readNBytes(reason), StandardCharsets.UTF_8));
        }
    }
}
