package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.PrefixStore;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rendezvous of gloo as PyTorch 2.2 and later link it, against transcripts written from gloo's sources (6d8b511
 * and on: {@code tcp::Rank::bytes}, {@code Address::bytes}, {@code Device::connectAsInitiator} writing the
 * {@code sequence_number_t}, {@code Listener::handleEvents} reading it): the test plays rank 0 of a gloo 2.x process
 * by hand, byte by byte, beside a JVM rank 1; the interop tests run against a live PyTorch 2.x
 * ({@code tools/pytorch2}) are the other half.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ListenerRendezvousTest {
    private static final HexFormat HEX = HexFormat.of();
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    @Test
    void aRankRecordIsGlooHostNameAddressAndOneSequenceNumberPerRank() {
        RankInfo info = new RankInfo("h", GlooAddress.of(new InetSocketAddress("127.0.0.1", 0x1234)),
                new long[] {0, 1});
        String sockaddr = "0200" + "1234" + "7f000001" + "00".repeat(120);
        String expected = "0100000000000000" + "68" // size_t length, "h"
                + "8800000000000000" + sockaddr + "ffffffffffffffff" // 136 bytes: sockaddr_storage, seq -1
                + "0000000000000000" + "0100000000000000"; // ssize_t per rank
        assertEquals(expected, HEX.formatHex(info.bytes()));
        RankInfo back = RankInfo.parse(info.bytes(), 2);
        assertEquals("h", back.hostName());
        assertEquals(info.address(), back.address());
        assertArrayEquals(new long[] {0, 1}, back.seqs());
        IllegalArgumentException wrongSize = assertThrows(IllegalArgumentException.class,
                () -> RankInfo.parse(info.bytes(), 3));
        assertTrue(wrongSize.getMessage().contains("group of 3"), wrongSize.getMessage());
        byte[] cut = Arrays.copyOf(info.bytes(), 20);
        assertThrows(IllegalArgumentException.class, () -> RankInfo.parse(cut, 2));
    }

    /** The pairs of one listening socket are told apart by their sequence numbers, as gloo's isInitiator does. */
    @Test
    void twoPairsOfOneSocketCompareTheirSequenceNumbers() {
        GlooAddress a = GlooAddress.of(new InetSocketAddress("127.0.0.1", 4000));
        assertTrue(a.withSeq(3).connectsTo(a.withSeq(1)));
        assertTrue(!a.withSeq(1).connectsTo(a.withSeq(3)));
    }

    private Future<Backend> jvmRank1(Store store, String bindHost) {
        BackendOptions options = new BackendOptions(1, 2, store, Duration.ofSeconds(20), "g", null, vertx,
                Map.of("gloo.bindHost", bindHost));
        return new GlooBackendProvider().create(options);
    }

    /** Rank 0's record as a gloo 2.x process writes it: listening at {@code at}, naming rank 1's pair {@code seq}. */
    private static byte[] rank0(InetSocketAddress at, long seq) {
        return new RankInfo("python-host", GlooAddress.of(at), new long[] {0, seq}).bytes();
    }

    /** A listening "rank 0" on 127.0.0.1 that keeps the first bytes a dialer writes. */
    private record Listener(NetServer server, Promise<Buffer> firstBytes) {
        InetSocketAddress address() {
            return new InetSocketAddress("127.0.0.1", server.actualPort());
        }
    }

    private Listener listener() throws Exception {
        Promise<Buffer> firstBytes = Promise.promise();
        NetServer server = vertx.createNetServer().connectHandler(s -> s.handler(b -> firstBytes.tryComplete(b)));
        server.listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
        return new Listener(server, firstBytes);
    }

    @Test
    void theGreaterSideDialsAndFirstWritesTheSequenceNumberItWasGiven() throws Exception {
        Listener python = listener();
        Store store = new HashStore();
        Store group = new PrefixStore("0", store);
        group.set("0", rank0(python.address(), 77)).await(10, TimeUnit.SECONDS);
        // The JVM rank listens on 127.0.0.2, the greater address, so it is the initiator.
        Future<Backend> jvm = jvmRank1(store, "127.0.0.2");
        Buffer first = python.firstBytes().future().await(20, TimeUnit.SECONDS);
        assertEquals("4d00000000000000", HEX.formatHex(first.getBytes(0, 8)), "ssize_t 77, native order");
        jvm.await(20, TimeUnit.SECONDS).close();

        RankInfo published = RankInfo.parse(group.get("1").await(10, TimeUnit.SECONDS), 2);
        assertArrayEquals(new long[] {0, 1}, published.seqs(), "a fresh device numbers its pairs in rank order");
        assertEquals(-1, published.address().seq());
        assertEquals("127.0.0.2", published.address().socketAddress().getAddress().getHostAddress());
    }

    /** GLOO_ENABLE_RANK_AS_SEQUENCE_NUMBER=1 (or lazy init): no numbers published, a pair answers to the rank. */
    @Test
    void aRecordWithoutSequenceNumbersIsDialedWithTheDialersRank() throws Exception {
        Listener python = listener();
        Store store = new HashStore();
        byte[] bare = new RankInfo("python-host", GlooAddress.of(python.address()), new long[0]).bytes();
        assertEquals(0, RankInfo.parse(bare, 2).seqs().length);
        new PrefixStore("0", store).set("0", bare).await(10, TimeUnit.SECONDS);
        Future<Backend> jvm = jvmRank1(store, "127.0.0.2");
        assertEquals("0100000000000000", HEX.formatHex(python.firstBytes().future().await(20, TimeUnit.SECONDS)
                .getBytes(0, 8)), "the JVM rank's own rank, 1");
        jvm.await(20, TimeUnit.SECONDS).close();
    }

    @Test
    void theSmallerSideWaitsForAConnectionNamingItsPair() throws Exception {
        Store store = new HashStore();
        Store group = new PrefixStore("0", store);
        // Rank 0 claims 127.0.0.2 (greater), so the JVM rank on 127.0.0.1 waits to be dialed.
        group.set("0", rank0(new InetSocketAddress("127.0.0.2", 9), 5)).await(10, TimeUnit.SECONDS);
        Future<Backend> jvm = jvmRank1(store, "127.0.0.1");
        RankInfo theirs = RankInfo.parse(group.get("1").await(10, TimeUnit.SECONDS), 2);
        InetSocketAddress at = theirs.address().socketAddress();

        NetSocket stranger = vertx.createNetClient().connect(at.getPort(), "127.0.0.1").await(10, TimeUnit.SECONDS);
        Promise<Void> strangerClosed = Promise.promise();
        stranger.closeHandler(v -> strangerClosed.tryComplete());
        stranger.write(Buffer.buffer().appendLongLE(1));
        strangerClosed.future().await(10, TimeUnit.SECONDS);
        assertTrue(!jvm.isComplete(), "a connection naming the rank's own pair is turned away");

        NetSocket python = vertx.createNetClient().connect(at.getPort(), "127.0.0.1").await(10, TimeUnit.SECONDS);
        python.write(Buffer.buffer().appendLongLE(theirs.seqs()[0]));
        jvm.await(20, TimeUnit.SECONDS).close();
    }
}
