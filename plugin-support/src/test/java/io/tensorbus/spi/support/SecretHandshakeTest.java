package io.tensorbus.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Both sides of {@link SecretHandshake} over loopback, and peers that break it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SecretHandshakeTest {
    private static final Duration LIMIT = Duration.ofSeconds(5);
    private Vertx vertx;
    private NetServer server;
    /** Held for the whole test: Vert.x closes a client, and its connections, once it is garbage collected. */
    private NetClient client;
    private Promise<Future<Void>> accepted;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        client = vertx.createNetClient();
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    /** A server whose connections run the acceptor's side with {@code secret} on {@code channel}. */
    private int serve(JobSecret secret, String channel, Duration timeout) throws Exception {
        accepted = Promise.promise();
        server = vertx.createNetServer().connectHandler(s -> {
            Future<Void> f = SecretHandshake.accept(s, secret, channel, timeout, vertx);
            f.onSuccess(v -> s.handler(b -> s.write(Buffer.buffer("echo:").appendBuffer(b))));
            accepted.tryComplete(f);
        });
        return server.listen(0, "127.0.0.1").await(5, TimeUnit.SECONDS).actualPort();
    }

    private NetSocket connect(int port) throws Exception {
        return client.connect(port, "127.0.0.1").await(5, TimeUnit.SECONDS);
    }

    private Throwable acceptorFailure() throws Exception {
        Future<Void> f = accepted.future().await(5, TimeUnit.SECONDS);
        return assertThrows(Exception.class, () -> f.await(5, TimeUnit.SECONDS));
    }

    @Test
    void theSameSecretLetsTheProtocolTalkRightAfter() throws Exception {
        JobSecret secret = JobSecret.random();
        NetSocket s = connect(serve(secret, "test", LIMIT));
        Promise<String> echoed = Promise.promise();
        SecretHandshake.connect(s, secret, "test", LIMIT, vertx).onSuccess(v -> {
            s.handler(b -> echoed.tryComplete(b.toString()));
            s.write("ping");
        }).await(5, TimeUnit.SECONDS);
        assertTrue(echoed.future().await(5, TimeUnit.SECONDS).equals("echo:ping"));
    }

    @Test
    void twoProcessesWithoutASecretMeetOnLoopback() throws Exception {
        NetSocket s = connect(serve(JobSecret.none(), "test", LIMIT));
        SecretHandshake.connect(s, JobSecret.none(), "test", LIMIT, vertx).await(5, TimeUnit.SECONDS);
        accepted.future().await(5, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    @Test
    void anotherSecretFailsBothSidesAndNeitherLetsTheOtherIn() throws Exception {
        NetSocket s = connect(serve(JobSecret.random(), "test", LIMIT));
        Future<Void> mine = SecretHandshake.connect(s, JobSecret.random(), "test", LIMIT, vertx);
        Exception e = assertThrows(Exception.class, () -> mine.await(5, TimeUnit.SECONDS));
        assertInstanceOf(AuthenticationException.class, e);
        assertTrue(e.getMessage().contains("a wrong proof of the job's secret"), e.getMessage());
        assertInstanceOf(AuthenticationException.class, acceptorFailure());
    }

    @Test
    void aStrangerGetsOnlyANonceNothingToGuessTheSecretFrom() throws Exception {
        NetSocket s = connect(serve(JobSecret.random(), "test", LIMIT));
        Buffer got = Buffer.buffer();
        Promise<Buffer> answered = Promise.promise();
        s.handler(b -> {
            got.appendBuffer(b);
            if (got.length() >= 8 + 32) {
                vertx.setTimer(200, t -> answered.tryComplete(got));
            }
        });
        byte[] nonce = new byte[32];
        s.write(Buffer.buffer().appendString("TBSH").appendByte((byte) 1).appendByte((byte) 1).appendByte((byte) 4)
                .appendString("test").appendBytes(nonce));
        Buffer answer = answered.future().await(5, TimeUnit.SECONDS);
        assertEquals(8 + 32, answer.length(), "the acceptor said more than its nonce before any proof");
    }

    @Test
    void anImpostorThatWelcomesAnyoneIsCaughtByItsProof() throws Exception {
        // Speaks the handshake but knows no secret: a nonce, then OK and a made-up proof for any client proof.
        server = vertx.createNetServer().connectHandler(s -> {
            Buffer in = Buffer.buffer();
            s.handler(b -> {
                int before = in.length();
                in.appendBuffer(b);
                if (before < 43 && in.length() >= 43) {
                    s.write(Buffer.buffer().appendString("TBSH").appendBytes(new byte[] {1, 0, 0, 0})
                            .appendBytes(new byte[32]));
                } else if (before < 75 && in.length() >= 75) {
                    s.write(Buffer.buffer().appendString("TBSH").appendBytes(new byte[] {1, 0, 0, 0})
                            .appendBytes(new byte[32]).appendString("forged protocol bytes"));
                }
            });
        });
        int port = server.listen(0, "127.0.0.1").await(5, TimeUnit.SECONDS).actualPort();
        Future<Void> mine = SecretHandshake.connect(connect(port), JobSecret.random(), "test", LIMIT, vertx);
        Exception e = assertThrows(Exception.class, () -> mine.await(5, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("does not know this job's secret (an impostor"), e.getMessage());
    }

    @Test
    void aSecretOnOneSideOnlyIsRefusedWithTheReason() throws Exception {
        NetSocket s = connect(serve(JobSecret.none(), "test", LIMIT));
        Future<Void> mine = SecretHandshake.connect(s, JobSecret.random(), "test", LIMIT, vertx);
        Exception e = assertThrows(Exception.class, () -> mine.await(5, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("this port's job has no secret, but the connecting process has one"),
                e.getMessage());
    }

    @Test
    void anotherChannelIsRefusedWithoutThePortSayingWhatItServes() throws Exception {
        JobSecret secret = JobSecret.random();
        NetSocket s = connect(serve(secret, "store", LIMIT));
        Future<Void> mine = SecretHandshake.connect(s, secret, "mesh", LIMIT, vertx);
        Exception e = assertThrows(Exception.class, () -> mine.await(5, TimeUnit.SECONDS));
        assertTrue(e.getMessage().contains("refused the connection: this port does not serve 'mesh'"), e.getMessage());
        assertTrue(!e.getMessage().contains("store"), "a peer that proved nothing learns nothing: " + e.getMessage());
        // Nor does one without the secret.
        Future<Void> none = SecretHandshake.connect(connect(serve(secret, "store", LIMIT)), JobSecret.none(), "store",
                LIMIT, vertx);
        Exception n = assertThrows(Exception.class, () -> none.await(5, TimeUnit.SECONDS));
        String reason = n.getMessage().substring(n.getMessage().indexOf("refused the connection:"));
        assertTrue(!reason.contains("store"), reason);
    }

    @Test
    void aStrangerIsDroppedAtItsFirstWrongByteAndOneThatStallsAtTheDeadlineBothCountedAndLogged() throws Exception {
        Logger log = Logger.getLogger(SecretHandshake.class.getName());
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(r.getLevel() + " " + r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(handler);
        log.setLevel(Level.ALL);
        long before = SecretHandshake.refusedConnections();
        try {
            strangerAndStaller();
        } finally {
            log.removeHandler(handler);
            log.setLevel(null);
        }
        assertEquals(2, SecretHandshake.refusedConnections() - before);
        assertTrue(lines.stream().anyMatch(l -> l.contains("refused a connection from 127.0.0.1:")
                && l.contains("to the test on 127.0.0.1:") && l.contains("did not open with a tensorbus handshake")),
                lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("did not finish within")), lines.toString());
    }

    private void strangerAndStaller() throws Exception {
        int port = serve(JobSecret.random(), "test", Duration.ofMillis(500));
        NetSocket stranger = connect(port);
        long t0 = System.nanoTime();
        stranger.write("G");
        assertTrue(acceptorFailure().getMessage().contains("did not open with a tensorbus handshake"));
        assertTrue(System.nanoTime() - t0 < 400_000_000L, "waited for more bytes of a stranger");
        accepted = Promise.promise();
        NetSocket staller = connect(port);
        staller.write("TBS");
        assertTrue(acceptorFailure().getMessage().contains("did not finish within"));
    }

    @Test
    void aChannelNameMustBeShortAscii() {
        NetSocket none = null;
        assertThrows(IllegalArgumentException.class,
                () -> SecretHandshake.connect(none, JobSecret.none(), "", LIMIT, vertx));
        assertThrows(IllegalArgumentException.class,
                () -> SecretHandshake.connect(none, JobSecret.none(), "x".repeat(33), LIMIT, vertx));
    }
}
