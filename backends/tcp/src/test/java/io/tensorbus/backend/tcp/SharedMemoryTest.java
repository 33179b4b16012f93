package io.tensorbus.backend.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.Buffers;
import io.tensorbus.spi.contract.MemoryStore;
import io.tensorbus.spi.contract.Ranks;
import io.tensorbus.spi.contract.Reference;
import io.tensorbus.spi.support.shm.SharedMemoryArea;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Ranks of one host talk through {@link SharedMemoryChannel}s: chosen by themselves, gone from {@code /dev/shm}
 * once mapped, exact with rings far smaller than the messages, off when the setting says so, and replaced by
 * TCP (said once) when the directory has no room; and all-reduce through one {@link SharedMemoryArea} of the
 * whole group, taken by every rank or by none, in call order with the collectives on the links.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedMemoryTest {
    private final BackendProvider provider = BackendProvider.named("tcp");
    private Vertx vertx;

    @BeforeAll
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stopVertx() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private Ranks ranks(int n, Map<String, String> properties) throws Exception {
        return Ranks.create(provider, vertx, n, Duration.ofSeconds(20), properties);
    }

    /** How many of the connections of {@code ranks} go through shared memory. */
    private static int sharedConnections(Ranks ranks) {
        int n = 0;
        for (int r = 0; r < ranks.size(); r++) {
            for (int p = 0; p < ranks.size(); p++) {
                if (p != r && ((TcpBackend) ranks.get(r)).connection(p).sharedMemory()) {
                    n++;
                }
            }
        }
        return n;
    }

    /** The channel and area files this JVM made that still exist. */
    private static List<Path> ourFiles() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            String channel = SharedMemoryChannel.PREFIX + ProcessHandle.current().pid() + "-";
            String area = SharedMemoryArea.PREFIX + ProcessHandle.current().pid() + "-";
            return files.filter(f -> f.getFileName().toString().startsWith(channel)
                    || f.getFileName().toString().startsWith(area)).toList();
        }
    }

    /** How many ranks all-reduce through the group's shared area. */
    private static long sharedAllReducers(Ranks ranks) {
        long n = 0;
        for (int r = 0; r < ranks.size(); r++) {
            n += ((TcpBackend) ranks.get(r)).usesSharedCollectives() ? 1 : 0;
        }
        return n;
    }

    private static void allReduceIsExact(Ranks ranks, DType dtype, long n) throws Exception {
        List<DeviceBuffer> bufs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            bufs.add(Reference.input(dtype, ReduceOp.SUM, r, ranks.size(), n));
        }
        DeviceBuffer expected = Reference.reduce(ReduceOp.SUM, bufs);
        List<Future<Void>> fs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
        }
        for (Future<Void> f : fs) {
            f.await(30, TimeUnit.SECONDS);
        }
        for (int r = 0; r < ranks.size(); r++) {
            assertEquals(-1, Buffers.mismatch(expected, bufs.get(r)), "allReduce of " + n + " on rank " + r);
        }
    }

    /** Broadcasts {@code n} elements of {@code dtype} from every rank in turn and checks every copy. */
    private static void broadcastIsExact(List<? extends Backend> ranks, DType dtype, long n) throws Exception {
        for (int root = 0; root < ranks.size(); root++) {
            List<DeviceBuffer> bufs = new ArrayList<>();
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < ranks.size(); r++) {
                bufs.add(r == root ? Reference.input(dtype, ReduceOp.SUM, r, ranks.size(), n)
                        : Buffers.vector(dtype, n));
                fs.add(ranks.get(r).broadcast(bufs.get(r), root));
            }
            for (Future<Void> f : fs) {
                f.await(30, TimeUnit.SECONDS);
            }
            for (int r = 0; r < ranks.size(); r++) {
                assertEquals(-1, Buffers.mismatch(bufs.get(root), bufs.get(r)), "root " + root + ", rank " + r);
            }
        }
    }

    @Test
    void ranksOnOneHostTalkThroughSharedMemoryAndLeaveNoFileBehind() throws Exception {
        try (Ranks ranks = ranks(3, Map.of())) {
            assertEquals(6, sharedConnections(ranks), "every connection of three ranks in one JVM");
            assertEquals(List.of(), ourFiles(), "channel files are deleted once both sides mapped them");
            allReduceIsExact(ranks, DType.FLOAT32, 5);
            allReduceIsExact(ranks, DType.FLOAT32, 3_000_001);
        }
        assertEquals(List.of(), ourFiles());
    }

    @Test
    void ranksOfOneHostAllReduceAndBroadcastInOneSharedAreaSliceBySlice() throws Exception {
        // 4 KiB slices: a million elements pass through each rank's two buffers hundreds of times. The ranks
        // are threads of this JVM, so the area's buffers are used only with the straight path off.
        try (Ranks ranks = ranks(3, Map.of("tcp.sharedMemorySliceBytes", "4096", "tcp.sharedMemoryInProcess",
                "false"))) {
            assertEquals(3, sharedAllReducers(ranks), "every rank of one host");
            assertEquals(List.of(), ourFiles(), "the area's file is deleted once every member mapped it");
            allReduceIsExact(ranks, DType.FLOAT32, 1);
            allReduceIsExact(ranks, DType.FLOAT64, 1_000_003);
            allReduceIsExact(ranks, DType.FLOAT16, 4095);
            allReduceIsExact(ranks, DType.INT64, 3);
            List<Backend> all = List.of(ranks.get(0), ranks.get(1), ranks.get(2));
            broadcastIsExact(all, DType.INT32, 250_001);
            assertEquals(0, ((TcpBackend) ranks.get(0)).inProcessAllReduces());
        }
    }

    @ParameterizedTest
    @EnumSource(value = ReduceOp.Type.class, names = {"SUM", "AVG", "MAX"})
    void ranksOfOneProcessAllReduceStraightBetweenTheirBuffersBitForBitAsThroughTheArea(ReduceOp.Type type)
            throws Exception {
        // Two ranks take the one-pass kernel, three the general order of the operands.
        for (int world : new int[] {2, 3}) {
            straightAndCopiedAgree(world, ReduceOp.of(type));
        }
    }

    private void straightAndCopiedAgree(int world, ReduceOp op) throws Exception {
        // Values whose sums round differently in another order: the straight path must keep the area's.
        Map<String, String> slices = Map.of("tcp.sharedMemorySliceBytes", "4096");
        try (Ranks straight = ranks(world, slices);
             Ranks copied = ranks(world, Map.of("tcp.sharedMemorySliceBytes", "4096", "tcp.sharedMemoryInProcess",
                     "false"))) {
            for (DType dtype : List.of(DType.FLOAT32, DType.FLOAT64)) {
                for (int n : new int[] {1, 1000, 300_007}) {
                    List<DeviceBuffer> a = randomInputs(dtype, n, world, 7L * n + dtype.ordinal());
                    List<DeviceBuffer> b = randomInputs(dtype, n, world, 7L * n + dtype.ordinal());
                    allReduce(straight, a, op);
                    allReduce(copied, b, op);
                    for (int r = 0; r < world; r++) {
                        assertEquals(-1, Buffers.mismatch(b.get(r), a.get(r)), world + " ranks, " + dtype + " n=" + n
                                + " rank " + r);
                        assertEquals(-1, Buffers.mismatch(a.get(0), a.get(r)), "every rank the same, rank " + r);
                    }
                }
            }
            for (int r = 0; r < world; r++) {
                assertEquals(6, ((TcpBackend) straight.get(r)).inProcessAllReduces(), "rank " + r);
                assertEquals(0, ((TcpBackend) copied.get(r)).inProcessAllReduces(), "rank " + r);
            }
        }
    }

    @Test
    void theStraightPathTakesEveryDtypeAndTensorsOfManySlicesAndPieces() throws Exception {
        // Default 4 MiB slices: 3,000,001 floats are three slices of three shares of several 256 KiB pieces each.
        try (Ranks straight = ranks(3, Map.of());
             Ranks copied = ranks(3, Map.of("tcp.sharedMemoryInProcess", "false"))) {
            List<DeviceBuffer> a = randomInputs(DType.FLOAT32, 3_000_001, 3, 11);
            List<DeviceBuffer> b = randomInputs(DType.FLOAT32, 3_000_001, 3, 11);
            allReduce(straight, a, ReduceOp.SUM);
            allReduce(copied, b, ReduceOp.SUM);
            for (int r = 0; r < 3; r++) {
                assertEquals(-1, Buffers.mismatch(b.get(r), a.get(r)), "rank " + r);
            }
            for (DType dtype : List.of(DType.FLOAT16, DType.BFLOAT16, DType.INT64, DType.INT32)) {
                allReduceIsExact(straight, dtype, 1_000_003);
            }
            assertEquals(5, ((TcpBackend) straight.get(0)).inProcessAllReduces());
        }
    }

    @Test
    void ranksThatShareOneBufferOrDisagreeOnTheStraightPathAllTakeTheAreasBuffers() throws Exception {
        try (Ranks ranks = ranks(3, Map.of())) {
            // Every rank passes the same memory: reducing it straight would add partial sums into themselves.
            DeviceBuffer shared = Reference.input(DType.INT64, ReduceOp.SUM, 0, 3, 100_000);
            DeviceBuffer expected = Reference.reduce(ReduceOp.SUM, List.of(shared, shared, shared));
            allReduce(ranks, List.of(shared, shared, shared), ReduceOp.SUM);
            assertEquals(-1, Buffers.mismatch(expected, shared));
            for (int r = 0; r < 3; r++) {
                assertEquals(0, ((TcpBackend) ranks.get(r)).inProcessAllReduces(), "rank " + r);
            }
        }
        Duration timeout = Duration.ofSeconds(20);
        MemoryStore store = new MemoryStore(timeout);
        List<Future<Backend>> made = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Map<String, String> properties = r == 1 ? Map.of("tcp.sharedMemoryInProcess", "false") : Map.of();
            made.add(provider.create(new BackendOptions(r, 3, store, timeout, "disagree", null, vertx, properties)));
        }
        List<Backend> ranks = new ArrayList<>();
        try {
            for (Future<Backend> f : made) {
                ranks.add(f.await(30, TimeUnit.SECONDS));
            }
            for (int round = 0; round < 3; round++) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    bufs.add(Reference.input(DType.INT64, ReduceOp.SUM, r, 3, 70_001 + round));
                }
                DeviceBuffer expected = Reference.reduce(ReduceOp.SUM, bufs);
                List<Future<Void>> fs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
                }
                for (int r = 0; r < 3; r++) {
                    fs.get(r).await(30, TimeUnit.SECONDS);
                    assertEquals(-1, Buffers.mismatch(expected, bufs.get(r)), "round " + round + ", rank " + r);
                }
            }
            for (Backend b : ranks) {
                assertEquals(0, ((TcpBackend) b).inProcessAllReduces(), "one rank refused: none goes straight");
            }
        } finally {
            for (Backend b : ranks) {
                b.close().await(10, TimeUnit.SECONDS);
            }
        }
    }

    private static List<DeviceBuffer> randomInputs(DType dtype, int n, int world, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<DeviceBuffer> bufs = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            DeviceBuffer b = Buffers.vector(dtype, n);
            for (long i = 0; i < n; i++) {
                double v = (random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(-3, 4));
                if (dtype == DType.FLOAT32) {
                    b.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
                } else {
                    b.segment().setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
                }
            }
            bufs.add(b);
        }
        return bufs;
    }

    private static void allReduce(Ranks ranks, List<DeviceBuffer> bufs, ReduceOp op) throws Exception {
        List<Future<Void>> fs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            fs.add(ranks.get(r).allReduce(bufs.get(r), op));
        }
        for (Future<Void> f : fs) {
            f.await(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void oneRankThatDeclinesTheAreaKeepsTheWholeGroupOnItsLinks() throws Exception {
        Duration timeout = Duration.ofSeconds(20);
        MemoryStore store = new MemoryStore(timeout);
        List<Future<Backend>> made = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Map<String, String> properties = r == 2 ? Map.of("tcp.sharedMemoryAllReduce", "false") : Map.of();
            made.add(provider.create(new BackendOptions(r, 3, store, timeout, "declined", null, vertx, properties)));
        }
        List<TcpBackend> ranks = new ArrayList<>();
        try {
            for (Future<Backend> f : made) {
                ranks.add((TcpBackend) f.await(30, TimeUnit.SECONDS));
            }
            for (TcpBackend b : ranks) {
                assertFalse(b.usesSharedCollectives(), "rank " + b.rank() + " must take the path its peers take");
                assertTrue(b.connection((b.rank() + 1) % 3).sharedMemory(), "its links still use shared memory");
            }
            List<DeviceBuffer> bufs = new ArrayList<>();
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                bufs.add(Reference.input(DType.INT32, ReduceOp.SUM, r, 3, 70_001));
            }
            DeviceBuffer expected = Reference.reduce(ReduceOp.SUM, bufs);
            for (int r = 0; r < 3; r++) {
                fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
            }
            for (int r = 0; r < 3; r++) {
                fs.get(r).await(30, TimeUnit.SECONDS);
                assertEquals(-1, Buffers.mismatch(expected, bufs.get(r)), "rank " + r);
            }
        } finally {
            for (TcpBackend b : ranks) {
                b.close().await(10, TimeUnit.SECONDS);
            }
        }
        assertEquals(List.of(), ourFiles());
    }

    @Test
    void collectivesOnTheAreaAndOnTheLinksRunInCallOrder() throws Exception {
        // allReduce (area), broadcast (links), allReduce (area) of one buffer, none awaited before the next is
        // called: only in call order is every element (1 + 2) * 2 = 6 at the end.
        try (Ranks ranks = ranks(2, Map.of())) {
            assertEquals(2, sharedAllReducers(ranks));
            for (int round = 0; round < 20; round++) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                List<Future<Void>> fs = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    DeviceBuffer b = Buffers.vector(DType.FLOAT32, 100_000);
                    for (long i = 0; i < b.numel(); i++) {
                        b.segment().setAtIndex(ValueLayout.JAVA_FLOAT, i, r + 1);
                    }
                    bufs.add(b);
                }
                for (int r = 0; r < 2; r++) {
                    fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
                    fs.add(ranks.get(r).broadcast(bufs.get(r), 1));
                    fs.add(ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
                }
                for (Future<Void> f : fs) {
                    f.await(30, TimeUnit.SECONDS);
                }
                for (int r = 0; r < 2; r++) {
                    for (long i = 0; i < bufs.get(r).numel(); i += 997) {
                        assertEquals(6f, bufs.get(r).segment().getAtIndex(
                                ValueLayout.JAVA_FLOAT, i), "round " + round + ", rank " + r);
                    }
                }
            }
        }
    }

    @Test
    void aMismatchCalledFarAheadOfTheCollectiveThreadStillFailsAndNothingAfterItSucceeds() throws Exception {
        // 100 calls go out before the collective thread reaches the 70th: its announcement is long overwritten
        // (64 are kept), so the stamps of the area's steps must catch the other size.
        int calls = 100;
        int odd = 69;
        try (Ranks ranks = ranks(2, Map.of())) {
            List<List<Future<Void>>> fs = List.of(new ArrayList<>(), new ArrayList<>());
            for (int i = 0; i < calls; i++) {
                for (int r = 0; r < 2; r++) {
                    long n = r == 1 && i == odd ? 11 : 10;
                    fs.get(r).add(ranks.get(r).allReduce(Buffers.vector(DType.FLOAT32, n), ReduceOp.SUM));
                }
            }
            for (int r = 0; r < 2; r++) {
                for (int i = 0; i < calls; i++) {
                    Future<Void> f = fs.get(r).get(i);
                    try {
                        f.await(30, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        // judged below
                    }
                    if (i < odd) {
                        assertTrue(f.succeeded(), "call " + i + " on rank " + r + ": " + f.cause());
                    } else {
                        assertTrue(f.failed(), "call " + i + " on rank " + r + " succeeded after the mismatch");
                    }
                }
                assertInstanceOf(CollectiveMismatchException.class, fs.get(r).get(odd).cause(), "rank " + r);
            }
        }
    }

    @Test
    void ringsMuchSmallerThanTheMessagesStillCarryThemExactly() throws Exception {
        // 64 KiB rings: every large message wraps around its ring many times and waits for room.
        Map<String, String> smallRings = Map.of("tcp.sharedMemoryRingBytes", "65536",
                "tcp.sharedMemoryAllReduce", "false");
        try (Ranks ranks = ranks(2, smallRings)) {
            assertEquals(2, sharedConnections(ranks));
            allReduceIsExact(ranks, DType.FLOAT64, 1_000_003);
            DeviceBuffer[] sent = new DeviceBuffer[3];
            List<Future<Void>> sends = new ArrayList<>();
            for (int i = 0; i < sent.length; i++) {
                sent[i] = Reference.input(DType.INT32, ReduceOp.SUM, i, 3, 500_000 + i);
                sends.add(ranks.get(0).send(sent[i], 1, 7));
            }
            for (int i = 0; i < sent.length; i++) {
                DeviceBuffer got = Buffers.vector(DType.INT32, 500_000 + i);
                assertEquals(0, ranks.get(1).recv(got, 0, 7).await(30, TimeUnit.SECONDS));
                assertEquals(-1, Buffers.mismatch(sent[i], got), "message " + i + " in order");
            }
            for (Future<Void> f : sends) {
                f.await(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void smallSendsWrittenOnTheCallersThreadNeverPassLargerOnesQueuedBeforeThem() throws Exception {
        // With 64 KiB rings a 100,000-int message waits in the queue of the event loop, while a 4-int one fits
        // and could be written straight away: it must still arrive after the large one sent before it.
        try (Ranks ranks = ranks(2, Map.of("tcp.sharedMemoryRingBytes", "65536"))) {
            List<DeviceBuffer> sent = new ArrayList<>();
            List<Future<Void>> sends = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                long n = i % 3 == 0 ? 100_000 : 4;
                DeviceBuffer b = Reference.input(DType.INT32, ReduceOp.SUM, i, 40, n);
                sent.add(b);
                sends.add(ranks.get(0).send(b, 1, 3));
            }
            for (int i = 0; i < sent.size(); i++) {
                DeviceBuffer got = Buffers.vector(DType.INT32, sent.get(i).numel());
                assertEquals(0, ranks.get(1).recv(got, 0, 3).await(30, TimeUnit.SECONDS), "message " + i);
                assertEquals(-1, Buffers.mismatch(sent.get(i), got), "message " + i + " in order");
            }
            for (Future<Void> f : sends) {
                f.await(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aBlockingReceiveTakesItsMessageOnTheCallersThread() throws Exception {
        try (Ranks ranks = ranks(2, Map.of())) {
            DeviceBuffer sent = Reference.input(DType.FLOAT32, ReduceOp.SUM, 0, 2, 5);
            DeviceBuffer got = Buffers.vector(DType.FLOAT32, 5);
            // The receiver polls before the message is written, so the event loop leaves it to that thread. Should
            // the send come before the poll starts (a loaded machine), the loop takes it: received normally, retried.
            boolean taken = false;
            for (int attempt = 0; attempt < 5 && !taken; attempt++) {
                var received = CompletableFuture.supplyAsync(
                        () -> ranks.get(1).tryRecvOnCallerThread(got, 0, 4, TimeUnit.SECONDS.toNanos(20)));
                Thread.sleep(200);
                ranks.get(0).send(sent, 1, 4).await(30, TimeUnit.SECONDS);
                taken = received.get(30, TimeUnit.SECONDS) == 0;
                if (!taken) {
                    ranks.get(1).recv(got, 0, 4).await(30, TimeUnit.SECONDS);
                }
                assertEquals(-1, Buffers.mismatch(sent, got));
            }
            assertTrue(taken, "never taken on the caller's thread");
            DeviceBuffer wrongSize = Buffers.vector(DType.FLOAT32, 6);
            ranks.get(0).send(sent, 1, 4).await(30, TimeUnit.SECONDS);
            assertEquals(-1, ranks.get(1).tryRecvOnCallerThread(wrongSize, 0, 4, TimeUnit.SECONDS.toNanos(1)),
                    "a message that does not fit is left to the event loop");
            var failure = assertThrows(Exception.class,
                    () -> ranks.get(1).recv(wrongSize, 0, 4).await(30, TimeUnit.SECONDS));
            assertTrue(failure.getMessage().contains("does not fit"), failure.getMessage());
            DeviceBuffer large = Buffers.vector(DType.FLOAT32, PointToPoint.CALLER_RECV_MAX_BYTES / 4 + 1);
            long start = System.nanoTime();
            assertEquals(-1, ranks.get(1).tryRecvOnCallerThread(large, 0, 4, TimeUnit.SECONDS.toNanos(5)),
                    "a large message is the event loop's");
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "it did not poll for it");
        }
    }

    @Test
    void aReceiveOnTheCallersThreadNeverOvertakesOnePostedBeforeIt() throws Exception {
        try (Ranks ranks = ranks(2, Map.of())) {
            for (int round = 0; round < 50; round++) {
                DeviceBuffer first = Reference.input(DType.INT32, ReduceOp.SUM, 1, 2, 3);
                DeviceBuffer second = Reference.input(DType.INT32, ReduceOp.SUM, 2, 2, 3);
                DeviceBuffer a = Buffers.vector(DType.INT32, 3);
                DeviceBuffer b = Buffers.vector(DType.INT32, 3);
                Future<Integer> posted = ranks.get(1).recv(a, 0, 9);
                ranks.get(0).send(first, 1, 9);
                ranks.get(0).send(second, 1, 9);
                if (ranks.get(1).tryRecvOnCallerThread(b, 0, 9, TimeUnit.MILLISECONDS.toNanos(50)) < 0) {
                    ranks.get(1).recv(b, 0, 9).await(30, TimeUnit.SECONDS);
                }
                posted.await(30, TimeUnit.SECONDS);
                assertEquals(-1, Buffers.mismatch(first, a), "the receive posted first gets the first message");
                assertEquals(-1, Buffers.mismatch(second, b), "round " + round);
            }
        }
    }

    @Test
    void aLargeMessageSentBeforeItsSenderLeftIsStillReceivedAndTheLeavingIsNoFailure() throws Exception {
        // The payload waits in the ring for its receive (a parked frame) when the sender's socket closes: it
        // and the GOODBYE behind it are read before the loss counts, as TCP's bytes would be.
        try (Ranks ranks = ranks(2, Map.of())) {
            DeviceBuffer sent = Reference.input(DType.INT32, ReduceOp.SUM, 1, 2, 300_000);
            ranks.get(1).send(sent, 0, 5).await(10, TimeUnit.SECONDS);
            ranks.get(1).close().await(10, TimeUnit.SECONDS);
            Thread.sleep(100);
            DeviceBuffer got = Buffers.vector(DType.INT32, 300_000);
            assertEquals(1, ranks.get(0).recv(got, 1, 5).await(10, TimeUnit.SECONDS));
            assertEquals(-1, Buffers.mismatch(sent, got));
            Throwable t = assertThrows(Exception.class,
                    () -> ranks.get(0).recv(Buffers.vector(DType.INT32, 4), 1, 6).await(10, TimeUnit.SECONDS));
            PeerLostException e = assertInstanceOf(PeerLostException.class, t.getCause() != null ? t.getCause() : t);
            assertTrue(e.getMessage().contains("left the group"), "an orderly departure, not a lost connection: "
                    + e.getMessage());
        }
    }

    @Test
    void ranksThatPreferDifferentChunksAgreeOnTheSmallest() throws Exception {
        // Rank 2 has smaller rings (and so prefers 8 KiB chunks), ranks 0 and 1 prefer 512 KiB: a chunk cut on
        // one rank must be the chunk its receiver expects.
        Duration timeout = Duration.ofSeconds(20);
        MemoryStore store = new MemoryStore(timeout);
        List<Future<Backend>> made = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            // Off the shared area, where broadcasts go in chunks through the rings.
            Map<String, String> properties = r == 2
                    ? Map.of("tcp.sharedMemoryRingBytes", "65536", "tcp.sharedMemoryAllReduce", "false")
                    : Map.of("tcp.sharedMemoryAllReduce", "false");
            made.add(provider.create(new BackendOptions(r, 3, store, timeout, "chunks", null, vertx, properties)));
        }
        List<TcpBackend> ranks = new ArrayList<>();
        try {
            for (Future<Backend> f : made) {
                ranks.add((TcpBackend) f.await(30, TimeUnit.SECONDS));
            }
            assertTrue(ranks.get(0).connection(2).sharedMemory());
            for (TcpBackend b : ranks) {
                assertEquals(65536 / 8, b.chunkBytes(), "rank " + b.rank());
            }
            broadcastIsExact(ranks, DType.INT64, 300_001);
        } finally {
            for (TcpBackend b : ranks) {
                b.close().await(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void theSettingTurnsSharedMemoryOff() throws Exception {
        try (Ranks ranks = ranks(2, Map.of("tcp.sharedMemory", "false"))) {
            assertEquals(0, sharedConnections(ranks));
            assertEquals(0, sharedAllReducers(ranks));
            allReduceIsExact(ranks, DType.FLOAT32, 100_000);
        }
    }

    @Test
    void aDirectoryWithoutRoomFallsBackToTcpAndSaysSoOncePerRank() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger logger = Logger.getLogger(TcpBackend.class.getName());
        logger.addHandler(handler);
        // /proc is on every Linux host and reports no free space: no channel fits.
        try (Ranks ranks = ranks(3, Map.of("tcp.sharedMemoryDir", "/proc"))) {
            assertEquals(0, sharedConnections(ranks));
            allReduceIsExact(ranks, DType.FLOAT32, 100_000);
        } finally {
            logger.removeHandler(handler);
        }
        // Rank 0 offers channels to ranks 1 and 2, rank 1 to rank 2: one line from each offering rank.
        List<String> lines = records.stream().map(LogRecord::getMessage).filter(m ->
                m.contains("shared memory")).toList();
        assertEquals(2, lines.size(), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("on rank 0")), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("on rank 1")), lines.toString());
        assertTrue(lines.getFirst().contains("bytes free"), lines.getFirst());
    }

    @Test
    void malformedSettingsFailTheGroupNamingTheSetting() {
        for (var bad : List.of(Map.of("tcp.sharedMemory", "yes"), Map.of("tcp.sharedMemoryRingBytes", "100000"),
                Map.of("tcp.sharedMemoryRingBytes", "4096"), Map.of("tcp.sharedMemorySpinMicros", "-1"))) {
            Exception e = assertThrows(Exception.class, () -> ranks(2, bad).close(), bad.toString());
            String key = bad.keySet().iterator().next();
            assertTrue(String.valueOf(e.getMessage()).contains(key) || String.valueOf(e.getCause()).contains(key),
                    bad + ": " + e);
        }
    }
}
