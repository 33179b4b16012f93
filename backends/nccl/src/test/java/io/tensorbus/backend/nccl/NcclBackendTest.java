package io.tensorbus.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.MemoryStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The nccl backend's own logic against test doubles of NCCL and of the CUDA stream: which NCCL calls each
 * operation makes (grouped where it takes a buffer per rank), the dtype and reduction mapping, completion from
 * CUDA events, and the watchdog's abort on a timeout, an asynchronous error or a failed call.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NcclBackendTest {
    private Vertx vertx;
    private RecordingNccl nccl;
    private FakeStream stream;
    private final List<Backend> opened = new ArrayList<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        nccl = new RecordingNccl();
        stream = new FakeStream();
    }

    @AfterEach
    void stop() throws Exception {
        for (Backend b : opened) {
            b.close().await(5, TimeUnit.SECONDS);
        }
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private NcclBackend backend(int rank, int world, Duration timeout) {
        BackendOptions o = new BackendOptions(rank, world, new MemoryStore(timeout), timeout, "g", null, vertx, null);
        NcclBackend b = new NcclBackend(o, nccl, 0x1000 + rank, stream, FakeStream.buffer(0x9000, DType.FLOAT32, 1));
        opened.add(b);
        return b;
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.await(10, TimeUnit.SECONDS);
    }

    private List<String> callsAfter(Future<?> f) throws Exception {
        stream.finishAll();
        await(f);
        return List.copyOf(nccl.calls);
    }

    @Test
    void allReduceIsOneInPlaceCallAndCompletesOnlyWhenItsEventDid() throws Exception {
        NcclBackend b = backend(1, 3, Duration.ofSeconds(10));
        Future<Void> f = b.allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 1024), ReduceOp.AVG);
        Thread.sleep(100);
        assertFalse(f.isComplete(), "the all-reduce completed before the device finished it");
        assertEquals(List.of("allReduce send=256 recv=256 count=1024 dtype=7 op=4"), callsAfter(f));
        assertEquals(1, stream.released.get(), "the event was released");
    }

    @Test
    void boolsTravelAsBytesAndReduceAsOrAndAnd() throws Exception {
        NcclBackend b = backend(0, 2, Duration.ofSeconds(10));
        stream.autoFinish = true;
        await(b.allReduce(FakeStream.buffer(0x10, DType.BOOL, 8), ReduceOp.SUM));
        await(b.allReduce(FakeStream.buffer(0x10, DType.BOOL, 8), ReduceOp.PRODUCT));
        assertEquals(List.of("allReduce send=16 recv=16 count=8 dtype=1 op=2",
                "allReduce send=16 recv=16 count=8 dtype=1 op=3"), nccl.calls);
        // NCCL takes its device from the calling thread: the thread that issues the calls made it current.
        assertTrue(stream.currentOn.stream().anyMatch(t -> t.startsWith("tensorbus-nccl-issue-")),
                stream.currentOn.toString());
    }

    @Test
    void bitwiseReductionsAnyRankReceivesAndHostBuffersAreRefusedNamingWhy() throws Exception {
        NcclBackend b = backend(0, 2, Duration.ofSeconds(10));
        assertMentions(failure(b.allReduce(FakeStream.buffer(0x10, DType.INT32, 8), ReduceOp.BXOR)), "BXOR",
                "not supported by the nccl backend", "allReduce");
        assertMentions(failure(b.recv(FakeStream.buffer(0x10, DType.INT32, 8), Backend.ANY_SOURCE, 0)), "any rank");
        DeviceBuffer host = DeviceBuffer.host(Arena.ofAuto().allocate(16), DType.FLOAT32, 4);
        assertMentions(failure(b.broadcast(host, 0)), "broadcast", "not CUDA memory", "cpu");
        // Refusals are the caller's mistakes: the group goes on.
        stream.autoFinish = true;
        await(b.broadcast(FakeStream.buffer(0x20, DType.FLOAT32, 4), 1));
    }

    private static Throwable failure(Future<?> f) {
        try {
            f.await(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            return f.cause();
        }
        return fail("expected a failure");
    }

    private static void assertMentions(Throwable t, String... parts) {
        for (String p : parts) {
            assertTrue(t.getMessage().contains(p), "expected '" + p + "' in: " + t.getMessage());
        }
    }

    @Test
    void perRankCollectivesAreGroupedCallsOnePerRank() throws Exception {
        NcclBackend b = backend(1, 3, Duration.ofSeconds(10));
        stream.autoFinish = true;
        List<DeviceBuffer> outs = List.of(FakeStream.buffer(0x100, DType.FLOAT32, 4),
                FakeStream.buffer(0x200, DType.FLOAT32, 4), FakeStream.buffer(0x300, DType.FLOAT32, 4));
        DeviceBuffer in = FakeStream.buffer(0x50, DType.FLOAT32, 4);
        await(b.allGather(outs, in));
        assertEquals(List.of("groupStart",
                "broadcast send=0 recv=256 count=4 dtype=7 root=0",
                "broadcast send=80 recv=512 count=4 dtype=7 root=1",
                "broadcast send=0 recv=768 count=4 dtype=7 root=2",
                "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.reduceScatter(in, outs, ReduceOp.MAX));
        assertEquals(List.of("groupStart",
                "reduce send=256 recv=0 count=4 dtype=7 op=2 root=0",
                "reduce send=512 recv=80 count=4 dtype=7 op=2 root=1",
                "reduce send=768 recv=0 count=4 dtype=7 op=2 root=2",
                "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.allToAll(outs, outs));
        assertEquals(List.of("groupStart",
                "send buf=256 count=4 dtype=7 peer=0", "recv buf=256 count=4 dtype=7 peer=0",
                "send buf=512 count=4 dtype=7 peer=1", "recv buf=512 count=4 dtype=7 peer=1",
                "send buf=768 count=4 dtype=7 peer=2", "recv buf=768 count=4 dtype=7 peer=2",
                "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.gather(List.of(), in, 0));
        assertEquals(List.of("groupStart", "send buf=80 count=4 dtype=7 peer=0", "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.gather(outs, in, 1));
        assertEquals(List.of("groupStart", "send buf=80 count=4 dtype=7 peer=1",
                "recv buf=256 count=4 dtype=7 peer=0", "recv buf=512 count=4 dtype=7 peer=1",
                "recv buf=768 count=4 dtype=7 peer=2", "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.scatter(in, List.of(), 2));
        assertEquals(List.of("groupStart", "recv buf=80 count=4 dtype=7 peer=2", "groupEnd"), nccl.calls);
        nccl.calls.clear();
        await(b.barrier());
        assertEquals(List.of("allReduce send=36864 recv=36864 count=1 dtype=7 op=0"), nccl.calls);
    }

    @Test
    void anOperationThatOutlivesTheTimeoutAbortsTheCommunicatorAndFailsEverythingNamingRankAndOp() throws Exception {
        NcclBackend b = backend(1, 2, Duration.ofMillis(300));
        Future<Void> first = b.allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 64), ReduceOp.SUM);
        Future<Void> second = b.broadcast(FakeStream.buffer(0x200, DType.FLOAT32, 64), 0);
        Throwable t = failure(first);
        CommunicationTimeoutException e = assertInstanceOf(CommunicationTimeoutException.class, t);
        assertMentions(e, "allReduce(float32[64], SUM) #1", "rank 1", "did not finish within", "group 'g'");
        assertMentions(failure(second), "broadcast(float32[64], root=0) #2", "rank 1");
        assertEquals(1, nccl.aborts.get(), "ncclCommAbort is called once");
        assertMentions(failure(b.barrier()), "barrier #3", "cannot run on rank 1", "did not finish within");
        assertEquals(1, nccl.aborts.get());
    }

    @Test
    void anAsynchronousNcclErrorAbortsAndFailsThePendingWorkWithNcclsMessage() throws Exception {
        NcclBackend b = backend(0, 2, Duration.ofSeconds(20));
        Future<Void> f = b.allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 64), ReduceOp.SUM);
        Thread.sleep(50);
        nccl.asyncError = NcclConstants.REMOTE_ERROR;
        long start = System.nanoTime();
        CommunicationException e = assertInstanceOf(CommunicationException.class, failure(f));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "noticed within a couple of polls");
        assertMentions(e, "allReduce", "rank 0", "ncclRemoteError", "last error of the test");
        assertEquals(1, nccl.aborts.get());
    }

    @Test
    void aCallNcclRefusesFailsItsOperationAndBreaksTheGroup() throws Exception {
        NcclBackend b = backend(0, 2, Duration.ofSeconds(20));
        nccl.failCall = "reduce";
        assertMentions(failure(b.reduce(FakeStream.buffer(0x100, DType.FLOAT64, 8), 1, ReduceOp.MIN)), "reduce(",
                "rank 0", "ncclInvalidUsage", "injected by the test");
        assertEquals(1, nccl.aborts.get());
        assertMentions(failure(b.allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 8), ReduceOp.SUM)),
                "cannot run on rank 0");
    }

    @Test
    void closingDestroysAnIdleCommunicatorAndAbortsABusyOne() throws Exception {
        NcclBackend idle = backend(0, 2, Duration.ofSeconds(20));
        await(idle.close());
        assertEquals(1, nccl.destroys.get());
        assertEquals(0, nccl.aborts.get());
        NcclBackend busy = backend(1, 2, Duration.ofSeconds(20));
        Future<Void> pending = busy.allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 8), ReduceOp.SUM);
        while (nccl.calls.stream().noneMatch(c -> c.startsWith("allReduce"))) {
            Thread.sleep(5); // issued, and now waiting for the device
        }
        await(busy.close());
        assertEquals(1, nccl.aborts.get());
        assertMentions(failure(pending), "allReduce", "closed on rank 1");
        assertMentions(failure(busy.barrier()), "closed on rank 1");
        await(busy.close()); // idempotent
    }

    @Test
    void theRanksMeetThroughTheStoreWithRankZerosUniqueId() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofSeconds(10));
        List<Future<NcclBackend>> ranks = new ArrayList<>();
        for (int r = 2; r >= 0; r--) {
            BackendOptions o = new BackendOptions(r, 3, store, Duration.ofSeconds(10), "g", null, vertx, null);
            ranks.add(NcclRendezvous.connect(o, nccl, stream, FakeStream.buffer(1, DType.FLOAT32, 1)));
        }
        for (Future<NcclBackend> f : ranks) {
            opened.add(await(f));
        }
        assertArrayEquals(nccl.uniqueId(), await(store.get(NcclRendezvous.UNIQUE_ID_KEY)));
        assertArrayEquals(nccl.uniqueId(), nccl.lastUniqueId);
        assertTrue(nccl.calls.containsAll(List.of("commInitRank nranks=3 rank=0", "commInitRank nranks=3 rank=1",
                "commInitRank nranks=3 rank=2")), nccl.calls.toString());
    }

    @Test
    void aRankThatNeverJoinsFailsTheOthersAfterTheTimeout() throws Exception {
        MemoryStore store = new MemoryStore(Duration.ofMillis(300));
        BackendOptions o = new BackendOptions(1, 2, store, Duration.ofMillis(300), "g", null, vertx, null);
        Throwable t = failure(NcclRendezvous.connect(o, nccl, stream, FakeStream.buffer(1, DType.FLOAT32, 1)));
        assertTrue(t.getMessage() != null, String.valueOf(t));
    }
}
