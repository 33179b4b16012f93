package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.distributed.rpc.impl.RpcHandshake;
import io.tensorbus.io.ObjectCodec;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
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

/** Processes that do not follow the handshake, or lack the secret, talking to a worker through raw sockets. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcHandshakeTest {
    private static final byte[] SECRET = "s3cret".getBytes(StandardCharsets.UTF_8);
    private final ObjectCodec codec = ObjectCodec.standard();
    private Vertx vertx;
    private HashStore store;

    @BeforeEach
    void setUp() {
        vertx = Distributed.newVertx();
        store = new HashStore(Duration.ofSeconds(30));
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private RpcOptions.Builder options() {
        return RpcOptions.builder().store(store).vertx(vertx).secret(SECRET).registry(new RpcRegistry())
                .timeout(Duration.ofSeconds(10));
    }

    /** What a raw socket to {@code worker} receives after sending {@code frames}, until the worker closes. */
    private Buffer exchange(int worker, List<Buffer> frames) throws Exception {
        String[] a = new String(store.get("rpc/worker/" + worker).await(5, TimeUnit.SECONDS),
                StandardCharsets.UTF_8).split("\n");
        NetSocket s = vertx.createNetClient().connect(Integer.parseInt(a[2]), a[1]).await(5, TimeUnit.SECONDS);
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

    @Test
    void aHugeFrameBeforeTheHandshakeIsRefusedAtItsHeader() throws Exception {
        List<RpcAgent> w = List.of(Rpc.init("worker0", 0, 1, options().build()).await(10, TimeUnit.SECONDS));
        Buffer header = RpcFrame.encode(RpcFrame.OPEN, 0, new byte[0]).setIntLE(16, 400 << 20);
        long t0 = System.nanoTime();
        Buffer got = exchange(0, List.of(header));
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "the worker waited for the body");
        assertTrue(got.toString(StandardCharsets.ISO_8859_1).contains("1024 allowed"), "no REFUSED with the limit");
        w.get(0).shutdown(false);
    }

    @Test
    void aWrongProofIsRefusedNamingTheClaimedWorkerAndCallsBeforeWelcomeAreRefused() throws Exception {
        RpcAgent w = Rpc.init("worker0", 0, 1, options().build()).await(10, TimeUnit.SECONDS);
        Buffer open = frame(RpcFrame.OPEN, List.of("worker0", 0, RpcHandshake.nonce(), 1 << 20));
        Buffer refused = exchange(0, List.of(open, frame(RpcFrame.HELLO, List.of(new byte[32]))));
        assertTrue(refused.toString(StandardCharsets.ISO_8859_1)
                .contains("the proof of the shared secret from worker0 (rank 0) is wrong"), "not refused for the proof");
        Buffer early = exchange(0, List.of(open, RpcFrame.encode(RpcFrame.CALL, 1, new byte[0])));
        assertTrue(early.toString(StandardCharsets.ISO_8859_1).contains("before the handshake"),
                "a call before WELCOME was not refused");
        assertEquals(3L, (Long) w.rpcSync("worker0", "builtin.add", 1, 2), "the worker lives");
        w.shutdown(false);
    }

    @Test
    void framesBehindARefusedOneInTheSameReadNeverRun() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        RpcAgent w = Rpc.init("worker0", 0, 1, options().registry(new RpcRegistry()
                .register("test.count", a -> runs.incrementAndGet())).build()).await(10, TimeUnit.SECONDS);
        String[] a = new String(store.get("rpc/worker/0").await(5, TimeUnit.SECONDS), StandardCharsets.UTF_8)
                .split("\n");
        NetSocket s = vertx.createNetClient().connect(Integer.parseInt(a[2]), a[1]).await(5, TimeUnit.SECONDS);
        List<Integer> kinds = new CopyOnWriteArrayList<>();
        Promise<Void> welcomed = Promise.promise();
        Promise<Void> closed = Promise.promise();
        s.handler(new RpcFrameParser(() -> 1 << 20, (h, body) -> {
            kinds.add(h.kind());
            if (h.kind() == RpcFrame.CHALLENGE) {
                List<?> m = (List<?>) codec.decode(body, List.class);
                byte[] proof = RpcHandshake.proof(SECRET, RpcHandshake.CALLER, (byte[]) m.get(1), "worker0", "worker0");
                s.write(frame(RpcFrame.HELLO, List.of(proof)));
            } else if (h.kind() == RpcFrame.WELCOME) {
                welcomed.complete();
            }
        }, why -> { }));
        s.closeHandler(v -> closed.tryComplete());
        s.write(frame(RpcFrame.OPEN, List.of("worker0", 0, RpcHandshake.nonce(), 1 << 20)));
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
        // worker1's address leads to an impostor that answers every OPEN with a made-up proof and a welcome.
        NetServer impostor = vertx.createNetServer().connectHandler(s -> s.handler(b -> s.write(
                frame(RpcFrame.CHALLENGE, List.of("worker1", RpcHandshake.nonce(), new byte[32], 1 << 20))
                        .appendBuffer(RpcFrame.encode(RpcFrame.WELCOME, 0, new byte[0]))
                        .appendBuffer(RpcFrame.encode(RpcFrame.RETURN, 1, codec.encode(List.of("forged")))))))
                .listen(0, "127.0.0.1").await(5, TimeUnit.SECONDS);
        store.set("rpc/worker/1", ("worker1\n127.0.0.1\n" + impostor.actualPort()).getBytes(StandardCharsets.UTF_8))
                .await(5, TimeUnit.SECONDS);
        Future<RpcAgent> started = Rpc.init("worker0", 0, 2, options().build());
        RpcAgent w = started.await(10, TimeUnit.SECONDS);
        RpcException e = assertThrows(RpcException.class, () -> w.rpcSync("worker1", "builtin.add", 1, 2));
        assertTrue(e.getMessage().contains("could not prove the shared secret"), e.getMessage());
        w.shutdown(false);
        impostor.close();
    }
}
