package io.tensorbus.distributed;

import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.spi.support.BlockingHandshake;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** {@link TcpStore}: the contract through a server and a client on loopback, and the network's own cases. */
class TcpStoreTest extends StoreContractTest {

    private static final String HOST = "127.0.0.1";
    /** The job's secret of the stores under test: every connection proves it. */
    private static final JobSecret SECRET = JobSecret.random();
    private static Vertx vertx;

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Override
    protected Views open(Duration timeout) throws Exception {
        TcpStore server = await(TcpStore.server(vertx, HOST, 0, timeout, SECRET));
        TcpStore client = await(TcpStore.client(vertx, HOST, server.port(), timeout, SECRET));
        return new Views(server, client);
    }

    @Override
    protected void close(Views views) throws Exception {
        await(((TcpStore) views.other()).closeAsync());
        await(((TcpStore) views.store()).closeAsync());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        }
    }

    @Test
    void portZeroBindsAFreePortThatPortPublishes() throws Exception {
        TcpStore server = (TcpStore) store;
        TcpStore client = (TcpStore) other;
        assertTrue(server.port() > 0 && server.port() <= 65535, "bound port " + server.port());
        assertTrue(server.isServer());
        assertFalse(client.isServer());
        assertEquals(server.port(), client.port());
        assertEquals(HOST, server.host());
        assertEquals(HOST, client.host());
    }

    @Test
    void aPortInUseFailsNamingTheAddress() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName(HOST))) {
            Throwable error = failure(TcpStore.server(vertx, HOST, taken.getLocalPort(), LONG));
            assertTrue(error.getMessage().contains(HOST + ":" + taken.getLocalPort()), error.getMessage());
            assertTrue(error.getMessage().contains("in use"), error.getMessage());
        }
        int storePort = ((TcpStore) store).port();
        Throwable error = failure(TcpStore.server(vertx, HOST, storePort, LONG));
        assertTrue(error.getMessage().contains(HOST + ":" + storePort), error.getMessage());
        assertTrue(error.getMessage().contains("in use"), error.getMessage());
    }

    @Test
    void aClientStartedBeforeTheServerConnectsOnceItListens() throws Exception {
        int port = freePort();
        Future<TcpStore> connecting = TcpStore.client(vertx, HOST, port, Duration.ofSeconds(15));
        Thread.sleep(300);
        assertFalse(connecting.isComplete(), "the client must keep retrying");
        TcpStore server = await(TcpStore.server(vertx, HOST, port, LONG));
        try {
            TcpStore client = await(connecting);
            await(client.set("early", bytes("bird")));
            assertEquals("bird", text(await(server.get("early"))));
            await(client.closeAsync());
        } finally {
            await(server.closeAsync());
        }
    }

    @Test
    void aClientWithoutServerTimesOutNamingTheAddress() throws Exception {
        int port = freePort();
        Throwable error = failure(TcpStore.client(vertx, HOST, port, SHORT));
        assertInstanceOf(TimeoutException.class, error);
        assertTrue(error.getMessage().contains(HOST + ":" + port), error.getMessage());
        assertTrue(error.getMessage().contains("300 ms"), error.getMessage());
    }

    @Test
    void garbageClosesOnlyThatConnectionAndTheServerKeepsServing() throws Exception {
        int port = ((TcpStore) store).port();
        List<byte[]> garbage = List.of(
                "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                frame(le(4).putInt(-1)),                                   // length 4 GiB - 1
                frame(le(4).putInt(3)),                                     // shorter than a header
                request((byte) 99, le(0)),                                  // unknown command
                request((byte) 2, le(8).putInt(1000).putInt(0)),            // SET: key length past the end
                request((byte) 8, le(1).put((byte) 7)),                     // NUM_KEYS with trailing bytes
                request((byte) 1, le(8).putInt(0x12345678).putInt(1)),      // PING with a bad magic
                request((byte) 2, le(10).putInt(2).put((byte) 0xc3).put((byte) 0x28).putInt(0))); // bad UTF-8
        for (boolean authenticated : new boolean[] {false, true}) {
            for (byte[] bytes : garbage) {
                try (Socket socket = new Socket(HOST, port)) {
                    socket.setSoTimeout(10_000);
                    if (authenticated) {
                        // A process of the job that then breaks the store's own protocol.
                        BlockingHandshake.connect(socket, SECRET, "store");
                    }
                    socket.getOutputStream().write(bytes);
                    socket.getOutputStream().flush();
                    assertClosedByServer(socket);
                }
                await(other.set("after-garbage", bytes("ok")));
                assertEquals("ok", text(await(other.get("after-garbage"))));
            }
        }
        Store second = await(TcpStore.client(vertx, HOST, port, LONG, SECRET));
        assertEquals("ok", text(await(second.get("after-garbage"))));
        await(((TcpStore) second).closeAsync());
    }

    @Test
    void aConnectionThatDoesNotProveTheSecretCanNeitherReadNorWriteAKey() throws Exception {
        int port = ((TcpStore) store).port();
        await(store.set("kept", bytes("the job's value")));
        byte[] key = "kept".getBytes(StandardCharsets.UTF_8);
        byte[] get = request((byte) 3, le(4 + key.length + 8).putInt(key.length).put(key).putLong(1000));
        byte[] set = request((byte) 2, le(4 + key.length + 8).putInt(key.length).put(key).putInt(4).putInt(0x6b636168));
        for (byte[] bytes : List.of(get, set)) {
            try (Socket socket = new Socket(HOST, port)) {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(bytes);
                socket.getOutputStream().flush();
                byte[] answer = socket.getInputStream().readAllBytes();
                assertEquals(0, answer.length, "the store answered a connection that proved nothing");
            } catch (SocketException reset) {
                // Closed with the request unread: refused too.
            }
        }
        assertEquals("the job's value", text(await(other.get("kept"))), "a stranger changed a key");
        for (JobSecret wrong : List.of(JobSecret.random(), JobSecret.none())) {
            try (Socket socket = new Socket(HOST, port)) {
                socket.setSoTimeout(10_000);
                assertThrows(AuthenticationException.class, () -> BlockingHandshake.connect(socket, wrong, "store"));
            }
        }
    }

    @Test
    void aClientOfAnotherJobIsRefusedAtOnceSayingWhy() {
        int port = ((TcpStore) store).port();
        long t0 = System.nanoTime();
        Exception other = assertThrows(Exception.class,
                () -> await(TcpStore.client(vertx, HOST, port, LONG, JobSecret.random())));
        assertTrue(other.getMessage().contains("a wrong proof of the job's secret"), other.getMessage());
        Exception none = assertThrows(Exception.class,
                () -> await(TcpStore.client(vertx, HOST, port, LONG, JobSecret.none())));
        assertTrue(none.getMessage().contains("the connecting process has no job secret and this port requires one")
                && none.getMessage().contains(JobSecret.ENV), none.getMessage());
        assertTrue(System.nanoTime() - t0 < LONG.toNanos(), "a refused client waited for its timeout");
    }

    @Test
    void withoutASecretTheServerListensOnLoopbackOnly() throws Exception {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> await(TcpStore.server(vertx, "0.0.0.0", 0, LONG, JobSecret.none())));
        assertTrue(e.getMessage().contains("cannot listen on 0.0.0.0 without a job secret")
                && e.getMessage().contains(JobSecret.FILE_ENV), e.getMessage());
        TcpStore loopback = await(TcpStore.server(vertx, HOST, 0, LONG, JobSecret.none()));
        TcpStore client = await(TcpStore.client(vertx, HOST, loopback.port(), LONG, JobSecret.none()));
        await(client.set("k", bytes("v")));
        assertEquals("v", text(await(loopback.get("k"))));
        await(client.closeAsync());
        await(loopback.closeAsync());
    }

    @Test
    void twoClientsShareTheStore() throws Exception {
        int port = ((TcpStore) store).port();
        TcpStore second = await(TcpStore.client(vertx, HOST, port, LONG, SECRET));
        try {
            Future<byte[]> waiting = second.get("between-clients");
            await(other.set("between-clients", bytes("v")));
            assertEquals("v", text(await(waiting)));
        } finally {
            await(second.closeAsync());
        }
    }

    @Test
    void aDroppedConnectionFailsPendingCallsNamingTheServer() throws Exception {
        TcpStore server = await(TcpStore.server(vertx, HOST, 0, LONG));
        TcpStore client = await(TcpStore.client(vertx, HOST, server.port(), LONG));
        Future<byte[]> waiting = client.get("never");
        Thread.sleep(100);
        await(server.closeAsync());
        Throwable error = failure(waiting);
        assertInstanceOf(IOException.class, error);
        assertTrue(error.getMessage().contains(HOST + ":" + server.port()), error.getMessage());
        Throwable later = failure(client.set("k", bytes("v")));
        assertTrue(later.getMessage().contains(HOST + ":" + server.port()), later.getMessage());
        await(client.closeAsync());
    }

    @Test
    void aClientStaysUsableAfterATimeoutAndIgnoresTheLateAnswer() throws Exception {
        TcpStore quick = await(TcpStore.client(vertx, HOST, ((TcpStore) store).port(), SHORT, SECRET));
        try {
            assertInstanceOf(TimeoutException.class, failure(quick.get("slow")));
            await(store.set("slow", bytes("late")));
            await(quick.set("next", bytes("fine")));
            assertEquals("late", text(await(quick.get("slow"))));
            assertEquals("fine", text(await(store.get("next"))));
        } finally {
            await(quick.closeAsync());
        }
    }

    @Test
    void closingAClientFailsItsPendingCalls() throws Exception {
        TcpStore client = await(TcpStore.client(vertx, HOST, ((TcpStore) store).port(), LONG, SECRET));
        Future<byte[]> waiting = client.get("never");
        await(client.closeAsync());
        Throwable error = failure(waiting);
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("closed"), error.getMessage());
        assertEquals(0L, await(store.numKeys()));
    }

    @Test
    void aClosedServerFreesItsPort() throws Exception {
        TcpStore server = await(TcpStore.server(vertx, HOST, 0, LONG));
        int port = server.port();
        await(server.closeAsync());
        // The port came from the ephemeral range, so another socket of this machine may take it in the
        // meantime (seen once in CI); a few tries within 2 s tell that apart from a port this server kept.
        TcpStore again = null;
        for (long end = System.nanoTime() + 2_000_000_000L; again == null; ) {
            try {
                again = await(TcpStore.server(vertx, HOST, port, LONG));
            } catch (IllegalStateException inUse) {
                if (System.nanoTime() > end) {
                    throw inUse;
                }
                Thread.sleep(50);
            }
        }
        assertEquals(port, again.port());
        await(again.closeAsync());
    }

    @Test
    void aRequestOverTheFrameLimitIsRefusedAtOnce() {
        byte[] huge = new byte[65 << 20];
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> other.set("big", huge));
        assertTrue(error.getMessage().contains("64 MiB"), error.getMessage());
    }

    @Test
    void factoriesRejectBadArguments() {
        assertThrows(NullPointerException.class, () -> TcpStore.server(null, HOST, 0, LONG));
        assertThrows(IllegalArgumentException.class, () -> TcpStore.server(vertx, " ", 0, LONG));
        IllegalArgumentException port = assertThrows(IllegalArgumentException.class,
                () -> TcpStore.server(vertx, HOST, 70000, LONG));
        assertTrue(port.getMessage().contains("70000"), port.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TcpStore.client(vertx, HOST, 0, LONG));
        assertThrows(IllegalArgumentException.class, () -> TcpStore.client(vertx, HOST, 1234, Duration.ofSeconds(-1)));
    }

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] frame(ByteBuffer body) {
        return body.array();
    }

    /** A length-prefixed request with command, request id 1 and the given fields. */
    private static byte[] request(byte command, ByteBuffer fields) {
        byte[] body = fields.array();
        ByteBuffer frame = le(4 + 9 + body.length);
        frame.putInt(9 + body.length).put(command).putLong(1).put(body);
        return frame.array();
    }

    /** The server closed the socket: a read ends (EOF or reset) before the 10 s read timeout. */
    private static void assertClosedByServer(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        try {
            byte[] buffer = new byte[256];
            while (in.read(buffer) >= 0) {
                // An error reply could come first; the connection must still end.
            }
        } catch (SocketTimeoutException stillOpen) {
            fail("the server did not close a connection that sent a malformed frame");
        } catch (SocketException reset) {
            // Closed with unread bytes pending: a reset is a close too.
        }
    }
}
