package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.AuthenticationException;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.io.ObjectCodec;
import io.tensorbus.spi.support.SecretHandshake;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Processes that skip the secret handshake, lack the secret, or break the OPEN/WELCOME exchange after it,
 * talking to a worker through raw sockets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcHandshakeTest {
    private static final JobSecret SECRET =
            JobSecret.of("the secret of this test job".getBytes(StandardCharsets.UTF_8));
    private static final JobSecret OTHER = JobSecret.of("the secret of another job!".getBytes(StandardCharsets.UTF_8));
    private final ObjectCodec codec = ObjectCodec.standard();
    private Vertx vertx;
    private HashStore store;
    /** Held for the whole test: Vert.x closes a client, and its connections, once it is garbage collected. */
    private NetClient client;

    @BeforeEach
    void setUp() {
        vertx = Distributed.newVertx();
        store = new HashStore(Duration.ofSeconds(30));
        client = vertx.createNetClient();
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private RpcOptions.Builder options() {
        return RpcOptions.builder().store(store).vertx(vertx).secret(SECRET).registry(new RpcRegistry())
                .timeout(Duration.ofSeconds(10));
    }

    /** A raw connection to {@code worker}, not yet authenticated. */
    private NetSocket raw(int worker) throws Exception {
        String[] a = new String(store.get("rpc/worker/" + worker).await(5, TimeUnit.SECONDS),
                StandardCharsets.UTF_8).split("\n");
        return client.connect(Integer.parseInt(a[2]), a[1]).await(5, TimeUnit.SECONDS);
    }

    /** A connection to {@code worker} that proved {@link #SECRET}. */
    private NetSocket joined(int worker) throws Exception {
        NetSocket s = raw(worker);
        SecretHandshake.connect(s, SECRET, "rpc", Duration.ofSeconds(5), vertx).await(5, TimeUnit.SECONDS);
        return s;
    }

    /** What {@code s} receives after sending {@code frames}, until the worker closes it. */
    private static Buffer exchange(NetSocket s, List<Buffer> frames) throws Exception {
        Buffer got = Buffer.buffer();
        Promise<Buffer> closed = Promise.promise();
        s.handler(got::appendBuffer);
        s.closeHandler(v -> closed.tryComplete(got));
        frames.forEach(s::write);
        return closed.future().await(15, TimeUnit.SECONDS);
    }

    private Buffer frame(int kind, List<Object> body) {
        return RpcFrame.encode(kind, 0, codec.encode(body));
    }

    private Buffer open() {
        return frame(RpcFrame.OPEN, List.of("worker0", 0, 1 << 20));
    }

    @Test
    void framesWithoutTheSecretHandshakeAreNeverReadNorAnswered() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        RpcAgent w = Rpc.init("worker0", 0, 1, options().registry(new RpcRegistry()
                .register("test.count", a -> runs.incrementAndGet())).build()).await(10, TimeUnit.SECONDS);
        Buffer call = RpcFrame.encode(RpcFrame.CALL, 1, codec.encode(Arrays.asList(Arrays.asList("test.count"),
                List.of())));
        Buffer got = exchange(raw(0), List.of(open(), call));
        assertEquals(0, got.length(), "the worker answered a connection that proved nothing: " + got);
        Thread.sleep(200);
        assertEquals(0, runs.get(), "a call of an unauthenticated connection ran");
        assertEquals(3L, (Long) w.rpcSync("worker0", "builtin.add", 1, 2), "the worker lives");
        w.shutdown(false);
    }

    @Test
    void aProcessWithAnotherSecretIsRefusedAtTheHandshake() throws Exception {
        RpcAgent w = Rpc.init("worker0", 0, 1, options().build()).await(10, TimeUnit.SECONDS);
        Future<Void> wrong = SecretHandshake.connect(raw(0), OTHER, "rpc", Duration.ofSeconds(5), vertx);
        Exception e = assertThrows(Exception.class, () -> wrong.await(10, TimeUnit.SECONDS));
        assertTrue(e instanceof AuthenticationException && e.getMessage().contains("a wrong proof of the job's secret"),
                String.valueOf(e));
        Future<Void> none = SecretHandshake.connect(raw(0), JobSecret.none(), "rpc", Duration.ofSeconds(5), vertx);
        Exception n = assertThrows(Exception.class, () -> none.await(10, TimeUnit.SECONDS));
        assertTrue(n.getMessage().contains("the connecting process has no job secret and this port requires one"),
                n.getMessage());
        w.shutdown(false);
    }

    @Test
    void aHugeFrameBeforeOpenIsRefusedAtItsHeader() throws Exception {
        RpcAgent w = Rpc.init("worker0", 0, 1, options().build()).await(10, TimeUnit.SECONDS);
        Buffer header = RpcFrame.encode(RpcFrame.OPEN, 0, new byte[0]).setIntLE(16, 400 << 20);
        long t0 = System.nanoTime();
        Buffer got = exchange(joined(0), List.of(header));
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "the worker waited for the body");
        assertTrue(got.toString(StandardCharsets.ISO_8859_1).contains("1024 allowed"), "no REFUSED with the limit");
        w.shutdown(false);
    }

    @Test
    void aCallBeforeOpenAndAStrangerNameAreRefused() throws Exception {
        RpcAgent w = Rpc.init("worker0", 0, 1, options().build()).await(10, TimeUnit.SECONDS);
        Buffer early = exchange(joined(0), List.of(RpcFrame.encode(RpcFrame.CALL, 1, new byte[0])));
        assertTrue(early.toString(StandardCharsets.ISO_8859_1).contains("before the handshake"),
                "a call before WELCOME was not refused");
        Buffer stranger = exchange(joined(0), List.of(frame(RpcFrame.OPEN, List.of("mallory", 0, 1 << 20))));
        assertTrue(stranger.toString(StandardCharsets.ISO_8859_1).contains("is not a worker of this job"),
                "a stranger's OPEN was not refused");
        assertEquals(3L, (Long) w.rpcSync("worker0", "builtin.add", 1, 2), "the worker lives");
        w.shutdown(false);
    }

    @Test
    void framesBehindARefusedOneInTheSameReadNeverRun() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        RpcAgent w = Rpc.init("worker0", 0, 1, options().registry(new RpcRegistry()
                .register("test.count", a -> runs.incrementAndGet())).build()).await(10, TimeUnit.SECONDS);
        NetSocket s = joined(0);
        List<Integer> kinds = new CopyOnWriteArrayList<>();
        Promise<Void> welcomed = Promise.promise();
        Promise<Void> closed = Promise.promise();
        s.handler(new RpcFrameParser(() -> 1 << 20, (h, body) -> {
            kinds.add(h.kind());
            if (h.kind() == RpcFrame.WELCOME) {
                welcomed.complete();
            }
        }, why -> { }));
        s.closeHandler(v -> closed.tryComplete());
        s.write(open());
        welcomed.future().await(10, TimeUnit.SECONDS);
        Buffer undecodable = RpcFrame.encode(RpcFrame.CALL, 1, new byte[] {42, 42, 42});
        Buffer valid = RpcFrame.encode(RpcFrame.CALL, 2, codec.encode(Arrays.asList(
                Arrays.asList("test.count"), List.of())));
        s.write(undecodable.copy().appendBuffer(valid));
        closed.future().await(10, TimeUnit.SECONDS);
        assertTrue(kinds.contains(RpcFrame.REFUSED), "no REFUSED: " + kinds);
        Thread.sleep(200);
        assertEquals(0, runs.get(), "the call behind the refused frame ran");
        assertEquals(3L, (Long) w.rpcSync("worker0", "builtin.add", 1, 2), "the worker lives");
        w.shutdown(false);
    }

    @Test
    void aCallerRefusesAnAcceptorThatCannotProveTheSecret() throws Exception {
        // worker1's address leads to an impostor that speaks the handshake without knowing the secret: it
        // welcomes any proof with a made-up one of its own, then a WELCOME and a forged result.
        NetServer impostor = vertx.createNetServer().connectHandler(s -> {
            Buffer in = Buffer.buffer();
            s.handler(b -> {
                int before = in.length();
                in.appendBuffer(b);
                Buffer ok = Buffer.buffer().appendString("TBSH").appendBytes(new byte[] {1, 0, 0, 0})
                        .appendBytes(new byte[32]);
                if (before < 42 && in.length() >= 42) {
                    s.write(ok);
                } else if (before < 74 && in.length() >= 74) {
                    s.write(ok.appendBuffer(frame(RpcFrame.WELCOME, List.of("worker1", 1 << 20)))
                            .appendBuffer(RpcFrame.encode(RpcFrame.RETURN, 1, codec.encode(List.of("forged")))));
                }
            });
        }).listen(0, "127.0.0.1").await(5, TimeUnit.SECONDS);
        store.set("rpc/worker/1", ("worker1\n127.0.0.1\n" + impostor.actualPort()).getBytes(StandardCharsets.UTF_8))
                .await(5, TimeUnit.SECONDS);
        RpcAgent w = Rpc.init("worker0", 0, 2, options().build()).await(10, TimeUnit.SECONDS);
        RpcException e = assertThrows(RpcException.class, () -> w.rpcSync("worker1", "builtin.add", 1, 2));
        assertTrue(e.getMessage().contains("worker1 (rank 1)") && e.getMessage().contains("could not be joined")
                && e.getMessage().contains("does not know this job's secret (an impostor"), e.getMessage());
        w.shutdown(false);
        impostor.close();
    }
}
