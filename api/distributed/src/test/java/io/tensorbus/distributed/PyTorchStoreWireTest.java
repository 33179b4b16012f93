package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Both TCPStore wires byte for byte, against transcripts written down from PyTorch's sources: what a client of ours
 * writes, and what our server answers to the bytes PyTorch's clients write. The 2.2+ transcripts follow
 * {@code TCPStore.cpp} ({@code SendBuffer}: the command byte, then {@code appendString} as a u64 length and the bytes,
 * {@code appendValue} in native little-endian order; the constructor's first query {@code VALIDATE} with the u32
 * {@code 0x3C85F7CE}) and {@code TCPStoreBackend.hpp}'s {@code QueryType}. The live check is the interop tests run
 * against a PyTorch 2.x ({@code tools/pytorch2}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PyTorchStoreWireTest {
    private static final HexFormat HEX = HexFormat.of();
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    /** The bytes of a PyTorch string or vector: u64 length, little-endian, then the bytes. */
    private static String str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return u64(b.length) + HEX.formatHex(b);
    }

    private static String u64(long v) {
        return HEX.formatHex(Buffer.buffer().appendLongLE(v).getBytes());
    }

    private static Buffer bytes(String hex) {
        return Buffer.buffer(HEX.parseHex(hex.replace(" ", "")));
    }

    /** A server that records what one client writes and answers {@code answer} once {@code expected} bytes came. */
    private record Recorder(NetServer server, Promise<Buffer> heard) {
        static Recorder start(Vertx vertx, int expected, Buffer answer) throws Exception {
            Promise<Buffer> heard = Promise.promise();
            Buffer all = Buffer.buffer();
            NetServer server = vertx.createNetServer().connectHandler(s -> s.handler(b -> {
                all.appendBuffer(b);
                if (all.length() >= expected && heard.tryComplete(all.copy())) {
                    s.write(answer);
                }
            }));
            server.listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
            return new Recorder(server, heard);
        }
    }

    @Test
    void aV2ClientValidatesItsConnectionThenWritesRenumberedCommands() throws Exception {
        String expected = "00 cef7853c" // VALIDATE, validationMagicNumber as a native u32
                + "01" + str("/k") + str("v") // SET
                + "04" + str("/c") + u64(5); // ADD
        Recorder r = Recorder.start(vertx, bytes(expected).length(), Buffer.buffer().appendLongLE(5));
        PyTorchTcpStore store = PyTorchTcpStore.connect(vertx, "127.0.0.1", r.server().actualPort(),
                Duration.ofSeconds(10), PyTorchWire.V2_2).await(10, TimeUnit.SECONDS);
        store.set("k", "v".getBytes(StandardCharsets.UTF_8));
        assertEquals(5L, store.add("c", 5).await(10, TimeUnit.SECONDS));
        assertEquals(expected.replace(" ", ""), HEX.formatHex(r.heard().future().await(10, TimeUnit.SECONDS)
                .getBytes()));
        store.close();
    }

    @Test
    void aV1ClientWritesNoHandshake() throws Exception {
        String expected = "00" + str("/k") + str("v") + "03" + str("/c") + u64(5);
        Recorder r = Recorder.start(vertx, bytes(expected).length(), Buffer.buffer().appendLongLE(5));
        PyTorchTcpStore store = PyTorchTcpStore.connect(vertx, "127.0.0.1", r.server().actualPort(),
                Duration.ofSeconds(10), PyTorchWire.V1_13).await(10, TimeUnit.SECONDS);
        store.set("k", "v".getBytes(StandardCharsets.UTF_8));
        assertEquals(5L, store.add("c", 5).await(10, TimeUnit.SECONDS));
        assertEquals(expected, HEX.formatHex(r.heard().future().await(10, TimeUnit.SECONDS).getBytes()));
        store.close();
    }

    @Test
    void aV2ClientThatHearsNothingSaysWhichWireItSpoke() throws Exception {
        Recorder r = Recorder.start(vertx, Integer.MAX_VALUE, Buffer.buffer());
        PyTorchTcpStore store = PyTorchTcpStore.connect(vertx, "127.0.0.1", r.server().actualPort(),
                Duration.ofMillis(300), PyTorchWire.V2_2).await(10, TimeUnit.SECONDS);
        Exception e = assertThrows(Exception.class, () -> store.add("c", 1).await(10, TimeUnit.SECONDS));
        assertTrue(e instanceof TimeoutException && e.getMessage().contains("V2_2") && e.getMessage()
                .contains("2.2 and later"), e.getMessage());
        store.close();
    }

    /** A raw connection: writes bytes and collects what comes back. */
    private static final class Raw {
        private final NetSocket socket;
        private final Buffer in = Buffer.buffer();
        private final Promise<Void> closed = Promise.promise();

        Raw(Vertx vertx, int port) throws Exception {
            socket = vertx.createNetClient().connect(port, "127.0.0.1").await(10, TimeUnit.SECONDS);
            socket.handler(in::appendBuffer);
            socket.closeHandler(v -> closed.tryComplete());
        }

        /** Writes {@code request} and answers the hex of the next {@code n} bytes that come back. */
        String ask(String request, int n) throws Exception {
            int from = in.length();
            socket.write(bytes(request));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (in.length() < from + n && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(in.length() >= from + n, "the server answered " + (in.length() - from) + " of " + n
                    + " bytes to " + request);
            return HEX.formatHex(in.getBytes(from, from + n));
        }
    }

    @Test
    void theServerTellsAV2ClientByItsValidationAndServesEveryCommand() throws Exception {
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0)
                .await(10, TimeUnit.SECONDS)) {
            Raw c = new Raw(vertx, server.port());
            assertEquals("", c.ask("00 cef7853c" + "01" + str("/a") + str("x"), 0), "VALIDATE and SET: no answer");
            assertEquals("78563412", c.ask("0d 78563412", 4), "PING echoes its nonce");
            assertEquals("00", c.ask("06" + u64(1) + str("/a"), 1), "WAIT for a set key: STOP_WAITING");
            assertEquals(str("x"), c.ask("03" + str("/a"), 9), "GET");
            assertEquals(u64(7), c.ask("04" + str("/n") + u64(7), 8), "ADD");
            assertEquals(str("y"), c.ask("02" + str("/cas") + str("") + str("y"), 9), "COMPARE_SET of an absent key");
            c.ask("09" + str("/a") + str("z"), 0);
            c.ask("0b" + u64(2) + str("/m1") + str("p") + str("/m2") + str("q"), 0);
            assertEquals(str("xz") + str("p") + str("q"), c.ask("0a" + u64(3) + str("/a") + str("/m1") + str("/m2"),
                    28), "APPEND and MULTI_SET, read back by MULTI_GET");
            assertEquals(u64(5), c.ask("07", 8), "GETNUMKEYS: /a /n /cas /m1 /m2");
            assertEquals(u64(1), c.ask("08" + str("/m2"), 8), "DELETE_KEY");
            assertEquals("01", c.ask("05" + u64(2) + str("/a") + str("/m2"), 1), "CHECK: NOT_READY");
            assertEquals("01", c.ask("06" + u64(1) + str("/late") + "0c", 1), "WAIT, CANCEL_WAIT: WAIT_CANCELED");
            assertEquals("00", c.ask("05" + u64(1) + str("/a"), 1), "the connection goes on after a cancel");

            Raw old = new Raw(vertx, server.port());
            assertEquals("00" + str("xz"), old.ask("05" + u64(1) + str("/a") + "02" + str("/a"), 11),
                    "a 1.13 client on the same server: WAIT=5, GET=2, the same keys");
        }
    }

    @Test
    void theServerClosesAValidatedConnectionThatSendsAWrongMagic() throws Exception {
        try (PyTorchStoreServer server = PyTorchStoreServer.start(vertx, "127.0.0.1", 0)
                .await(10, TimeUnit.SECONDS)) {
            Raw c = new Raw(vertx, server.port());
            c.socket.write(bytes("00 cef7853c" + "00 01020304"));
            Future<Void> closed = c.closed.future();
            closed.await(10, TimeUnit.SECONDS);
            assertTrue(closed.succeeded());
        }
    }

    @Test
    void aVersionNamesItsWire() throws Exception {
        assertEquals(PyTorchWire.V1_13, PyTorchWire.forVersion("1.13.1"));
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
                () -> PyTorchWire.forVersion("2.0.1+cpu"));
        assertTrue(mixed.getMessage().contains("not served"), mixed.getMessage());
        assertEquals(PyTorchWire.V2_2, PyTorchWire.forVersion("2.2"));
        IllegalArgumentException between = assertThrows(IllegalArgumentException.class,
                () -> PyTorchWire.forVersion("2.1.2"));
        assertTrue(between.getMessage().contains("not served"), between.getMessage());
        assertEquals(PyTorchWire.V2_2, PyTorchWire.forVersion("2.6.0a0+git1234"));
        assertEquals(PyTorchWire.V2_2, PyTorchWire.forVersion("10.0"));
        IllegalArgumentException old = assertThrows(IllegalArgumentException.class,
                () -> PyTorchWire.forVersion("1.12.1"));
        assertTrue(old.getMessage().contains("1.13"), old.getMessage());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> PyTorchWire.forVersion("1"));
        assertTrue(bad.getMessage().contains("major.minor"), bad.getMessage());
    }
}
