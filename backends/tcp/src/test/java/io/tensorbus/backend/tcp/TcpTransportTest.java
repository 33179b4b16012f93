package io.tensorbus.backend.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tensorbus.DType;
import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.support.BlockingHandshake;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.Buffers;
import io.tensorbus.spi.contract.MemoryStore;
import io.tensorbus.spi.contract.Ranks;
import io.tensorbus.spi.contract.Reference;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The tcp backend's own transport: strangers and broken peers on its port, and set-up that must fail with
 * a clear message. The tests speak the wire protocol by hand with plain sockets.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpTransportTest {
    private Vertx vertx;
    private final BackendProvider provider = new TcpBackendProvider();

    @BeforeAll
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stopVertx() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private Ranks ranks(int n, Map<String, String> properties) throws Exception {
        return Ranks.create(provider, vertx, n, Duration.ofSeconds(10), properties);
    }

    /** Runs a SUM allReduce on every rank and checks the result: the group works. */
    private static void assertGroupWorks(Ranks ranks) throws Exception {
        int world = ranks.size();
        for (long n : new long[] {10, 100_001}) {
            List<DeviceBuffer> bufs = new ArrayList<>();
            for (int r = 0; r < world; r++) {
                bufs.add(Reference.input(DType.FLOAT32, ReduceOp.SUM, r, world, n));
            }
            DeviceBuffer expected = Reference.reduce(ReduceOp.SUM, bufs);
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < world; r++) {
                fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
            }
            for (Future<Void> f : fs) {
                f.await(20, TimeUnit.SECONDS);
            }
            for (int r = 0; r < world; r++) {
                assertEquals(-1, Buffers.mismatch(expected, bufs.get(r)), "allReduce result on rank " + r);
            }
        }
    }

    /** {@link #connect}, then the secret handshake with {@code secret}: what a peer of the job opens with. */
    private static Socket joined(MemoryStore store, int rank, JobSecret secret) throws Exception {
        Socket s = connect(store, rank);
        BlockingHandshake.connect(s, secret, Mesh.CHANNEL);
        return s;
    }

    /** Connects to where {@code rank} of the group listens (its {@code tcp/addr/<rank>} store entry). */
    private static Socket connect(MemoryStore store, int rank) throws Exception {
        // The entry is "host:port", then " shm=<host identity>" when the rank uses shared memory.
        String address = new String(store.get("tcp/addr/" + rank).await(10, TimeUnit.SECONDS), StandardCharsets.UTF_8)
                .split(" ")[0];
        int colon = address.lastIndexOf(':');
        Socket s = new Socket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
        s.setSoTimeout(3000);
        return s;
    }

    private static byte[] bytes(Frame f) {
        ByteBuf b = f.encode();
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        b.release();
        return out;
    }

    private static Frame hello(String group, int rank, int world) {
        return new Frame(Frame.HELLO, 0, 0, Frame.NO_REDUCE, -1, -1, 0, 0, 0, group.hashCode(), 0,
                ((long) rank << 32) | world);
    }

    private static Frame readFrame(InputStream in) throws IOException {
        byte[] header = in.readNBytes(Frame.HEADER_BYTES);
        assertEquals(Frame.HEADER_BYTES, header.length, "a whole frame header");
        return Frame.decode(Unpooled.wrappedBuffer(header));
    }

    /** Asserts that the other end closes {@code s} soon (reads return end of stream or a reset). */
    private static void assertDisconnected(Socket s, String what) throws IOException {
        InputStream in = s.getInputStream();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        try {
            while (System.nanoTime() < deadline) {
                if (in.read(new byte[4096]) < 0) {
                    return;
                }
            }
        } catch (SocketTimeoutException e) {
            fail(what + ": the backend kept the connection open");
        } catch (IOException e) {
            return; // reset: closed too
        }
        fail(what + ": the backend kept the connection open");
    }

    /**
     * A peer's socket reads small messages into small buffers, not into one of SO_RCVBUF's 8 MiB per read: Netty
     * fixes a channel's read handle at its first read, so the adaptive one must be set before the handshake.
     */
    @Test
    void peerSocketsReadSmallMessagesIntoSmallBuffers() throws Exception {
        try (Ranks ranks = ranks(2, Map.of("tcp.sharedMemory", "false"))) {
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                fs.add(ranks.get(r).allReduce(Buffers.alloc(DType.FLOAT32, 10), ReduceOp.SUM));
            }
            for (Future<Void> f : fs) {
                f.await(20, TimeUnit.SECONDS);
            }
            for (int r = 0; r < 2; r++) {
                PeerConnection c = ((TcpBackend) ranks.get(r)).connection(1 - r);
                int next = c.eventLoop().submit(c::nextReadBytes).get(10, TimeUnit.SECONDS);
                assertTrue(next <= 64 * 1024, "rank " + r + " reads into buffers of " + next + " bytes");
            }
        }
    }

    @Test
    void strangersOnTheListeningPortAreDisconnectedAndTheGroupKeepsWorking() throws Exception {
        try (Ranks ranks = ranks(3, Map.of())) {
            byte[] random = new byte[5000];
            new SplittableRandom(7).nextBytes(random);
            Frame dataInsteadOfHello = new Frame(Frame.DATA, Opcode.SEND.code, 0, Frame.NO_REDUCE, -1, -1, 1, 1 << 24,
                    0, ranks.groupName().hashCode(), 1 << 24, 0);
            // Without the secret handshake nothing is read: not even a valid HELLO of the group.
            Map<String, byte[]> strangers = new LinkedHashMap<>();
            strangers.put("random bytes", random);
            strangers.put("an HTTP request",
                    "GET / HTTP/1.1\r\nHost: x\r\n\r\n".repeat(4).getBytes(StandardCharsets.UTF_8));
            strangers.put("a valid HELLO without the secret handshake", bytes(hello(ranks.groupName(), 2, 3)));
            // After it, a member of the job that says something wrong.
            Map<String, byte[]> members = new LinkedHashMap<>();
            members.put("a HELLO of another group", bytes(hello("another group", 2, 3)));
            members.put("a HELLO claiming rank 1 again", bytes(hello(ranks.groupName(), 1, 3)));
            members.put("a HELLO with another world size", bytes(hello(ranks.groupName(), 2, 5)));
            members.put("a data frame instead of a HELLO", bytes(dataInsteadOfHello));
            for (boolean authenticated : new boolean[] {false, true}) {
                for (var stranger : (authenticated ? members : strangers).entrySet()) {
                    for (int rank = 0; rank < 3; rank++) {
                        try (Socket s = authenticated ? joined(ranks.store(), rank, ranks.secret())
                                : connect(ranks.store(), rank)) {
                            OutputStream out = s.getOutputStream();
                            out.write(stranger.getValue());
                            if (stranger.getKey().startsWith("a data frame")) {
                                out.write(random); // the start of a payload it announced
                            }
                            out.flush();
                            assertDisconnected(s, stranger.getKey() + " sent to rank " + rank);
                        }
                    }
                    assertGroupWorks(ranks);
                }
            }
        }
    }

    @Test
    void aConnectionThatCannotProveTheJobSecretIsRefusedWithTheReason() throws Exception {
        try (Ranks ranks = ranks(2, Map.of())) {
            JobSecret other = JobSecret.random();
            for (JobSecret wrong : List.of(other, JobSecret.none())) {
                try (Socket s = connect(ranks.store(), 0)) {
                    AuthenticationException e = assertThrows(AuthenticationException.class,
                            () -> BlockingHandshake.connect(s, wrong, Mesh.CHANNEL));
                    String expected = wrong.isPresent() ? "a wrong proof of the job's secret"
                            : "the connecting process has no job secret";
                    assertTrue(e.getMessage().contains(expected), e.getMessage());
                    assertDisconnected(s, "a connection refused at the handshake");
                }
            }
            try (Socket s = connect(ranks.store(), 1)) {
                AuthenticationException e = assertThrows(AuthenticationException.class,
                        () -> BlockingHandshake.connect(s, ranks.secret(), "store"));
                assertTrue(e.getMessage().contains("this port does not serve 'store'"), e.getMessage());
            }
            assertGroupWorks(ranks);
        }
    }

    @Test
    void ranksWithDifferentSecretsFailSetUpSayingSo() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(5));
        String group = "secrets-" + System.nanoTime();
        List<Future<Backend>> fs = List.of(
                provider.create(new BackendOptions(0, 2, store, Duration.ofSeconds(5), group, null, vertx, Map.of(),
                        JobSecret.random())),
                provider.create(new BackendOptions(1, 2, store, Duration.ofSeconds(5), group, null, vertx, Map.of(),
                        JobSecret.random())));
        Exception e = assertThrows(Exception.class, () -> fs.get(1).await(10, TimeUnit.SECONDS));
        assertTrue(fs.get(1).isComplete(), "set-up hangs: " + e);
        String message = fs.get(1).cause().getMessage();
        assertTrue(message.contains("rank 0") && message.contains("a wrong proof of the job's secret"), message);
        assertThrows(Exception.class, () -> fs.get(0).await(10, TimeUnit.SECONDS));
    }

    @Test
    void withoutASecretTheMeshListensOnLoopbackOnly() {
        Future<Backend> f = provider.create(new BackendOptions(0, 2, new MemoryStore(Duration.ofSeconds(5)),
                Duration.ofSeconds(5), "open-" + System.nanoTime(), null, vertx, Map.of("tcp.bindHost", "0.0.0.0")));
        assertTrue(f.failed(), "a mesh without a secret listened on every interface");
        String message = f.cause().getMessage();
        assertTrue(message.contains("cannot listen on 0.0.0.0 without a job secret") && message.contains(JobSecret.ENV),
                message);
    }

    @Test
    void aFakePeerThatSendsAMalformedFrameFailsTheAllReduceWithPeerLost() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(10));
        String group = "fake-peer-" + System.nanoTime();
        JobSecret secret = JobSecret.random();
        Future<Backend> created = provider.create(new BackendOptions(0, 2, store, Duration.ofSeconds(10), group, null,
                vertx, Map.of(), secret));
        // Play rank 1 by hand: what Mesh publishes, then the handshake.
        store.add("tcp/claim/1", 1).await(5, TimeUnit.SECONDS);
        store.set("tcp/world/1", "2".getBytes(StandardCharsets.UTF_8)).await(5, TimeUnit.SECONDS);
        store.set("tcp/addr/1", "127.0.0.1:9".getBytes(StandardCharsets.UTF_8)).await(5, TimeUnit.SECONDS);
        Backend rank0;
        try (Socket s = joined(store, 0, secret)) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(bytes(hello(group, 1, 2)));
            out.flush();
            Frame reply = readFrame(in);
            assertEquals(Frame.HELLO, reply.kind());
            assertEquals(0, reply.aux() >>> 32, "rank 0 answers as rank 0");
            assertEquals(2, (int) reply.aux(), "with world size 2");
            rank0 = created.await(10, TimeUnit.SECONDS);
            try {
                Future<Void> allReduce = rank0.allReduce(Buffers.vector(DType.FLOAT32, 10), ReduceOp.SUM);
                Frame first = readFrame(in);
                assertEquals(Frame.DATA, first.kind());
                assertEquals(Opcode.ALL_REDUCE.code, first.opcode(), "rank 0 is inside the allReduce");
                in.readNBytes((int) first.payloadBytes());
                byte[] garbage = new byte[Frame.HEADER_BYTES + 40];
                new SplittableRandom(3).nextBytes(garbage);
                out.write(garbage);
                out.flush();
                try {
                    allReduce.await(5, TimeUnit.SECONDS);
                    fail("the allReduce succeeded although its peer sent garbage");
                } catch (Exception e) {
                    assertTrue(allReduce.isComplete(), "the allReduce hangs after its peer sent garbage");
                    PeerLostException lost = assertInstanceOf(PeerLostException.class, allReduce.cause());
                    assertEquals(1, lost.peer(), lost.getMessage());
                    assertTrue(lost.getMessage().contains("rank 1") && lost.getMessage().contains("malformed"),
                            lost.getMessage());
                }
                assertDisconnected(s, "a peer that sent a malformed frame");
            } finally {
                rank0.close().await(10, TimeUnit.SECONDS);
            }
        }
        // The process is fine: a new group works.
        try (Ranks ranks = ranks(2, Map.of())) {
            assertGroupWorks(ranks);
        }
    }

    @Test
    void aHeaderAnnouncingATebibyteIsNeverBufferedAndItsReceiveFailsClearly() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(10));
        String group = "huge-header-" + System.nanoTime();
        JobSecret secret = JobSecret.random();
        Future<Backend> created = provider.create(new BackendOptions(0, 2, store, Duration.ofSeconds(10), group, null,
                vertx, Map.of(), secret));
        store.add("tcp/claim/1", 1).await(5, TimeUnit.SECONDS);
        store.set("tcp/world/1", "2".getBytes(StandardCharsets.UTF_8)).await(5, TimeUnit.SECONDS);
        store.set("tcp/addr/1", "127.0.0.1:9".getBytes(StandardCharsets.UTF_8)).await(5, TimeUnit.SECONDS);
        try (Socket s = joined(store, 0, secret)) {
            OutputStream out = s.getOutputStream();
            out.write(bytes(hello(group, 1, 2)));
            out.flush();
            readFrame(s.getInputStream());
            Backend rank0 = created.await(10, TimeUnit.SECONDS);
            try {
                // A point-to-point header for 1 TiB that nobody receives yet: copying it aside would need 1 TiB.
                out.write(bytes(new Frame(Frame.DATA, Opcode.SEND.code, DType.FLOAT32.ordinal(), Frame.NO_REDUCE, -1,
                        -1, 5, Frame.MAX_PAYLOAD / 4, 0, group.hashCode(), Frame.MAX_PAYLOAD, 0)));
                out.flush();
                Thread.sleep(10 * PeerConnection.PARK_MILLIS);
                Future<Integer> recv = rank0.recv(Buffers.vector(DType.FLOAT32, 10), 1, 5);
                Throwable e = assertThrows(Exception.class, () -> recv.await(3, TimeUnit.SECONDS));
                assertTrue(recv.isComplete(), "the receive hangs behind the parked header: " + e);
                assertTrue(recv.cause().getMessage().contains("does not fit"), recv.cause().getMessage());
            } finally {
                rank0.close().await(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aRankClaimedTwiceFailsSetUpNamingTheRank() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(5));
        String group = "twice-" + System.nanoTime();
        List<Future<Backend>> zeros = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            zeros.add(provider.create(new BackendOptions(0, 2, store, Duration.ofSeconds(5), group, null, vertx,
                    Map.of())));
        }
        Future<Backend> one = provider.create(new BackendOptions(1, 2, store, Duration.ofSeconds(5), group, null, vertx,
                Map.of()));
        List<Backend> made = new ArrayList<>();
        List<Throwable> failed = new ArrayList<>();
        for (Future<Backend> f : List.of(zeros.get(0), zeros.get(1), one)) {
            try {
                made.add(f.await(10, TimeUnit.SECONDS));
            } catch (Exception e) {
                assertTrue(f.isComplete(), "set-up hangs");
                failed.add(f.cause());
            }
        }
        try {
            assertEquals(1, failed.size(), "exactly the second claim of rank 0 fails: " + failed);
            String message = failed.getFirst().getMessage();
            assertTrue(message.contains("rank 0") && message.contains("claimed"), message);
            assertEquals(2, made.size());
        } finally {
            for (Backend b : made) {
                b.close().await(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aWorldSizeMismatchFailsSetUpNamingBothSizes() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(5));
        String group = "worlds-" + System.nanoTime();
        List<Future<Backend>> fs = List.of(
                provider.create(new BackendOptions(0, 2, store, Duration.ofSeconds(5), group, null, vertx, Map.of())),
                provider.create(new BackendOptions(1, 3, store, Duration.ofSeconds(5), group, null, vertx, Map.of())));
        for (Future<Backend> f : fs) {
            try {
                f.await(10, TimeUnit.SECONDS).close();
                fail("set-up succeeded with world sizes 2 and 3");
            } catch (Exception e) {
                assertTrue(f.isComplete(), "set-up hangs");
                String message = f.cause().getMessage();
                assertTrue(message.contains("worldSize=2") && message.contains("worldSize=3"), message);
            }
        }
    }

    @Test
    void everyConnectionRunsOnItsGroupsEventLoop() throws Exception {
        // The store completes its futures on whichever thread set a key (here: other ranks' event loops), so
        // set-up must hop back to the group's context before it connects, or the socket lands on another loop.
        for (int k = 0; k < 5; k++) {
            try (Ranks ranks = ranks(4, Map.of())) {
                for (int r = 0; r < 4; r++) {
                    TcpBackend b = (TcpBackend) ranks.get(r);
                    for (int p = 0; p < 4; p++) {
                        if (p != r) {
                            assertTrue(b.connection(p).eventLoop() == b.context().nettyEventLoop(),
                                    "rank " + r + "'s connection to rank " + p + " runs on another event loop than"
                                            + " its group's");
                        }
                    }
                }
            }
        }
    }

    @Test
    void connectionsOutliveTheHandshakeDeadline() throws Exception {
        try (Ranks ranks = ranks(3, Map.of("tcp.handshakeMillis", "200"))) {
            Thread.sleep(700);
            assertGroupWorks(ranks);
        }
    }

    @Test
    void smallPipelineChunksGiveTheSameResults() throws Exception {
        // Odd chunk sizes that do not divide the element size: the cuts are element-aligned anyway.
        for (String chunk : List.of("4099", "65537")) {
            try (Ranks ranks = ranks(3, Map.of("tcp.chunkBytes", chunk))) {
                assertGroupWorks(ranks);
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    bufs.add(Reference.input(DType.FLOAT64, ReduceOp.MAX, r, 3, 300_007));
                }
                DeviceBuffer expected = Reference.reduce(ReduceOp.MAX, bufs);
                List<Future<Void>> fs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    fs.add(ranks.get(r).reduce(bufs.get(r), 1, ReduceOp.MAX));
                }
                for (Future<Void> f : fs) {
                    f.await(20, TimeUnit.SECONDS);
                }
                assertEquals(-1, Buffers.mismatch(expected, bufs.get(1)), "reduce with chunks of " + chunk);
            }
        }
    }
}
