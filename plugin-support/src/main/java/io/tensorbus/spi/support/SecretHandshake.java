package io.tensorbus.spi.support;

import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The mutual proof of the {@link JobSecret} that opens every connection of a job, before the connection's own
 * protocol (store requests, backend frames, RPC calls) reads or writes a byte. One mechanism for every
 * channel, so a backend plugin authenticates its connections with the same two calls:
 * {@link #connect} on the side that opened the connection, {@link #accept} on the side that accepted it.
 *
 * <p>The exchange: the connector sends {@code "TBSH"}, a version, whether it has a secret, the channel's name
 * ({@code "store"}, {@code "mesh"}, {@code "rpc"}, ...) and a fresh 32-byte nonce; the acceptor answers with its
 * own nonce; the connector proves the secret with {@code HMAC-SHA256(secret, "tensorbus-handshake-1" | "client"
 * | channel | connector nonce | acceptor nonce)}; the acceptor checks that in constant time and answers with
 * its verdict and its own proof (the same with {@code "server"}), which the connector checks. The connector
 * proves first, as in SCRAM, so a stranger who connects gets no proof to guess the secret from offline.
 * Neither side talks to a process without the secret, and a proof cannot be replayed on another connection,
 * channel or in the other role. A side without a secret ({@link JobSecret#none()}) sends zero proofs and
 * accepts only a peer without one either. Bytes sent before the verdict, a wrong proof, another channel's
 * name or a secret on one side only refuse the connection, with a reason for a peer that speaks this
 * handshake; until the connector has proven the secret the acceptor says nothing about itself (not what its port
 * serves). Every refusal on the accepting side, random bytes and connections left idle until the deadline
 * included, is counted ({@link #refusedConnections()}) and logged with who, which port and why, as a warning at
 * most once a second (then with how many were refused meanwhile) and at debug level otherwise.
 *
 * <p>Both futures complete on the connection's event loop before any further byte is read: install the
 * protocol's handlers in a continuation attached before completion ({@code onSuccess}, {@code compose}). The
 * protocol on top must let the connector speak first: bytes from the acceptor that arrive together with its
 * verdict refuse the connection.
 */
public final class SecretHandshake {
    /** How long a new connection may take to finish the exchange, unless its protocol says otherwise. */
    public static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** The first bytes of every handshake message. */
    private static final byte[] MAGIC = {'T', 'B', 'S', 'H'};
    private static final byte VERSION = 1;
    private static final int NONCE_BYTES = 32;
    private static final int PROOF_BYTES = 32;
    /** The connector's opening: magic, version, flags, channel length; then the channel and the nonce. */
    private static final int OPENING_HEADER = 7;
    /** Every message of the acceptor: magic, version, status, reason length (2 bytes). */
    private static final int ANSWER_HEADER = 8;
    private static final int MAX_CHANNEL = 32;
    private static final int MAX_REASON = 1024;
    private static final byte OK = 0;
    private static final byte REFUSED = 1;
    private static final byte HAS_SECRET = 1;
    private static final byte[] LABEL = "tensorbus-handshake-1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER = "server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT = "client".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(SecretHandshake.class.getName());
    /** When the next refusal may be logged as a warning ({@link System#nanoTime()}). */
    private static final AtomicLong nextWarning = new AtomicLong(System.nanoTime());
    /** Connections refused by the accepting side in this process. */
    private static final AtomicLong refused = new AtomicLong();
    /** Refusals since the last warning. */
    private static final AtomicLong unwarned = new AtomicLong();

    private SecretHandshake() {
    }

    /**
     * Proves {@code secret} to the process that accepted {@code socket}, and checks its proof.
     *
     * @param channel the name both sides give the connection's protocol, 1 to 32 ASCII characters
     * @param timeout how long the whole exchange may take
     * @return completes once the acceptor has let this side in; fails with an {@link AuthenticationException}
     *     saying why (the socket is closed then)
     */
    public static Future<Void> connect(NetSocket socket, JobSecret secret, String channel, Duration timeout,
            Vertx vertx) {
        return new Connector(socket, secret, channel, vertx).start(timeout);
    }

    /**
     * Checks the proof of {@code secret} from the process that opened {@code socket}, and proves it back.
     *
     * @param channel the name of the protocol served on this port, 1 to 32 ASCII characters
     * @param timeout how long the connector may take to finish the exchange
     * @return completes once the connector is let in; fails with an {@link AuthenticationException} saying why
     *     (the socket is closed then, and the refusal logged)
     */
    public static Future<Void> accept(NetSocket socket, JobSecret secret, String channel, Duration timeout,
            Vertx vertx) {
        return new Acceptor(socket, secret, channel, vertx).start(timeout);
    }

    /** How many connections the accepting side refused in this process, for every channel. */
    public static long refusedConnections() {
        return refused.get();
    }

    /** What both sides share: the bytes read so far, the deadline, the outcome. */
    private abstract static class Side {
        final NetSocket socket;
        final JobSecret secret;
        final byte[] channel;
        final Vertx vertx;
        final Promise<Void> done = Promise.promise();
        /** This side's nonce, and the other side's once it has arrived. */
        final byte[] nonce = nonce();
        byte[] theirs;
        Buffer pending = Buffer.buffer();
        long timer = -1;

        Side(NetSocket socket, JobSecret secret, String channel, Vertx vertx) {
            this.socket = socket;
            this.secret = secret;
            this.channel = checkChannel(channel);
            this.vertx = vertx;
        }

        Future<Void> start(Duration timeout) {
            timer = vertx.setTimer(Math.max(1, timeout.toMillis()),
                    t -> fail("the handshake did not finish within " + timeout, true));
            socket.handler(this::received);
            socket.closeHandler(v -> fail(peer() + " closed the connection during the handshake", false));
            socket.exceptionHandler(e -> fail("the connection failed during the handshake: " + e, true));
            begin();
            return done.future();
        }

        abstract void begin();

        /** Consumes what {@code pending} holds; returns false when it needs more bytes. */
        abstract boolean step();

        abstract String peer();

        private void received(Buffer data) {
            if (done.future().isComplete()) {
                // The protocol installs its own handler on completion: nothing should reach this one.
                socket.close();
                return;
            }
            pending.appendBuffer(data);
            while (!done.future().isComplete() && pending.length() > 0 && step()) {
                // Each step consumed one message.
            }
        }

        /** The first {@code n} bytes of {@code pending}, removed from it; null when fewer have arrived. */
        Buffer take(int n) {
            if (pending.length() < n) {
                return null;
            }
            Buffer head = pending.getBuffer(0, n);
            pending = pending.getBuffer(n, pending.length());
            return head;
        }

        boolean hasMagic(Buffer b) {
            return b.length() >= MAGIC.length && Arrays.equals(b.getBytes(0, MAGIC.length), MAGIC);
        }

        /** False as soon as the bytes that arrived cannot start a handshake message: no waiting for more. */
        boolean mayBeMagic(Buffer b) {
            int n = Math.min(b.length(), MAGIC.length);
            return Arrays.equals(b.getBytes(0, n), Arrays.copyOf(MAGIC, n));
        }

        byte[] proof(byte[] role, byte[] connectorNonce, byte[] acceptorNonce) {
            return secret.isPresent() ? secret.mac(LABEL, role, channel, connectorNonce, acceptorNonce)
                    : new byte[PROOF_BYTES];
        }

        boolean proven(byte[] proof, byte[] role, byte[] connectorNonce, byte[] acceptorNonce) {
            return !secret.isPresent() || MessageDigest.isEqual(proof(role, connectorNonce, acceptorNonce), proof);
        }

        void succeed() {
            vertx.cancelTimer(timer);
            done.tryComplete();
        }

        void fail(String why, boolean close) {
            vertx.cancelTimer(timer);
            if (done.future().isComplete()) {
                return;
            }
            // Logged before the failure is seen: a caller that waits on it finds the log line written.
            failed(why);
            done.tryFail(new AuthenticationException(why));
            if (close) {
                socket.close();
            }
        }

        /** The handshake failed for {@code why}; nothing to do by default. */
        void failed(String why) {
        }

        String channelName() {
            return new String(channel, StandardCharsets.US_ASCII);
        }
    }

    /** The side that opened the connection. */
    private static final class Connector extends Side {
        Connector(NetSocket socket, JobSecret secret, String channel, Vertx vertx) {
            super(socket, secret, channel, vertx);
        }

        @Override
        void begin() {
            socket.write(Buffer.buffer().appendBytes(MAGIC).appendByte(VERSION)
                    .appendByte(secret.isPresent() ? HAS_SECRET : 0).appendByte((byte) channel.length)
                    .appendBytes(channel).appendBytes(nonce));
        }

        @Override
        boolean step() {
            if (pending.length() < ANSWER_HEADER && mayBeMagic(pending)) {
                return false;
            }
            if (!hasMagic(pending) || pending.getByte(4) != VERSION) {
                fail(peer() + " does not answer with a tensorbus handshake (another program on that port, or "
                        + "another tensorbus version)", true);
                return false;
            }
            int reasonBytes = pending.getUnsignedShortLE(6);
            if (pending.getByte(5) == REFUSED) {
                return refused(reasonBytes);
            }
            if (reasonBytes != 0 || pending.getByte(5) != OK) {
                fail(peer() + " sent a malformed handshake answer", true);
                return false;
            }
            return theirs == null ? challenge() : verdict();
        }

        private boolean refused(int reasonBytes) {
            Buffer m = take(ANSWER_HEADER + Math.min(reasonBytes, MAX_REASON));
            if (m == null) {
                return false;
            }
            fail(peer() + " refused the connection: " + printable(m.getString(ANSWER_HEADER, m.length(),
                    StandardCharsets.UTF_8.name())), true);
            return false;
        }

        /** The acceptor's nonce: this side proves the secret first, so a stranger learns nothing to guess at. */
        private boolean challenge() {
            Buffer m = take(ANSWER_HEADER + NONCE_BYTES);
            if (m == null) {
                return false;
            }
            theirs = m.getBytes(ANSWER_HEADER, m.length());
            socket.write(Buffer.buffer(proof(CLIENT, nonce, theirs)));
            return true;
        }

        /** The acceptor's verdict: it let this side in and proves the secret back. */
        private boolean verdict() {
            Buffer m = take(ANSWER_HEADER + PROOF_BYTES);
            if (m == null) {
                return false;
            }
            if (!proven(m.getBytes(ANSWER_HEADER, m.length()), SERVER, nonce, theirs)) {
                fail(peer() + " does not know this job's secret (an impostor, or a process of another job on that "
                        + "address)", true);
                return false;
            }
            if (pending.length() > 0) {
                fail(peer() + " sent data before the handshake finished", true);
                return false;
            }
            succeed();
            return false;
        }

        @Override
        String peer() {
            return "the " + channelName() + " at " + socket.remoteAddress();
        }
    }

    /** The side that accepted the connection. */
    private static final class Acceptor extends Side {
        Acceptor(NetSocket socket, JobSecret secret, String channel, Vertx vertx) {
            super(socket, secret, channel, vertx);
        }

        @Override
        void begin() {
            // The connector speaks first.
        }

        @Override
        boolean step() {
            return theirs == null ? opening() : proof();
        }

        private boolean opening() {
            if (pending.length() < OPENING_HEADER && mayBeMagic(pending)) {
                return false;
            }
            if (!hasMagic(pending)) {
                fail(peer() + " did not open with a tensorbus handshake", true);
                return false;
            }
            int channelBytes = pending.getUnsignedByte(6);
            Buffer m = take(OPENING_HEADER + Math.min(channelBytes, MAX_CHANNEL) + NONCE_BYTES);
            if (m == null) {
                return false;
            }
            String refusal = refusal(m, channelBytes);
            if (refusal != null) {
                refuse(refusal);
                return false;
            }
            theirs = m.getBytes(m.length() - NONCE_BYTES, m.length());
            socket.write(answer(OK, "").appendBytes(nonce));
            return true;
        }

        /** Why the connector's opening {@code m} is refused, or null. */
        private String refusal(Buffer m, int channelBytes) {
            if (m.getByte(4) != VERSION) {
                return "handshake version " + m.getByte(4) + " is not spoken here (this process speaks " + VERSION
                        + ")";
            }
            if (channelBytes > MAX_CHANNEL) {
                return "a channel name of " + channelBytes + " bytes (at most " + MAX_CHANNEL + ")";
            }
            // Said to a peer that has proven nothing: what it asked for, never what this port serves.
            String wanted = printable(m.getString(OPENING_HEADER, OPENING_HEADER + channelBytes, "US-ASCII"));
            if (!wanted.equals(channelName())) {
                return "this port does not serve '" + wanted + "'";
            }
            boolean theyHaveOne = (m.getByte(5) & HAS_SECRET) != 0;
            if (secret.isPresent() && !theyHaveOne) {
                return "the connecting process has no job secret and this port requires one; give every process of "
                        + "the job the same " + JobSecret.ENV + " or " + JobSecret.FILE_ENV + " (tensorbus launch "
                        + "does so for its ranks)";
            }
            if (!secret.isPresent() && theyHaveOne) {
                return "this port's job has no secret, but the connecting process has one (processes of two "
                        + "different jobs?)";
            }
            return null;
        }

        private boolean proof() {
            Buffer m = take(PROOF_BYTES);
            if (m == null) {
                return false;
            }
            if (pending.length() > 0) {
                refuse("data sent before the handshake finished");
                return false;
            }
            if (!proven(m.getBytes(), CLIENT, theirs, nonce)) {
                refuse("a wrong proof of the job's secret (a process of another job, or a different "
                        + JobSecret.ENV + ")");
                return false;
            }
            // The verdict, with this side's own proof, goes out before the protocol's handlers run.
            socket.write(answer(OK, "").appendBytes(proof(SERVER, theirs, nonce)));
            succeed();
            return false;
        }

        private void refuse(String why) {
            socket.write(answer(REFUSED, why));
            fail(peer() + " was refused: " + why, true);
        }

        /** Counts and logs the refusal: who, which port, why. */
        @Override
        void failed(String why) {
            refused.incrementAndGet();
            long meanwhile = unwarned.incrementAndGet();
            // At most one warning a second: strangers must not be able to flood the log.
            long now = System.nanoTime();
            long next = nextWarning.get();
            boolean warn = now - next >= 0 && nextWarning.compareAndSet(next, now + 1_000_000_000L);
            if (warn) {
                unwarned.addAndGet(-meanwhile);
            }
            LOG.log(warn ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG, "refused a connection from "
                    + socket.remoteAddress() + " to the " + channelName() + " on " + socket.localAddress() + ": " + why
                    + (warn && meanwhile > 1 ? " (" + meanwhile + " refused since the last warning, "
                    + refused.get() + " in all)" : ""));
        }

        @Override
        String peer() {
            return "the connection from " + socket.remoteAddress() + " to the " + channelName();
        }
    }

    /** {@code text} from a peer with control characters replaced, fit for a log line or a message. */
    private static String printable(String text) {
        StringBuilder b = new StringBuilder(text.length());
        text.codePoints().forEach(c -> b.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        return b.toString();
    }

    private static Buffer answer(byte status, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        text = Arrays.copyOf(text, Math.min(text.length, MAX_REASON));
        return Buffer.buffer().appendBytes(MAGIC).appendByte(VERSION).appendByte(status)
                .appendUnsignedShortLE(text.length).appendBytes(text);
    }

    private static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    private static byte[] checkChannel(String channel) {
        if (channel == null || channel.isEmpty() || channel.length() > MAX_CHANNEL
                || !StandardCharsets.US_ASCII.newEncoder().canEncode(channel)) {
            throw new IllegalArgumentException("channel '" + channel + "' must be 1 to " + MAX_CHANNEL
                    + " ASCII characters");
        }
        return channel.getBytes(StandardCharsets.US_ASCII);
    }
}
