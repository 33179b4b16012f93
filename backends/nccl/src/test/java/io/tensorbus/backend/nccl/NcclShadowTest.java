package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.contract.MemoryStore;
import io.tensorbus.spi.contract.Ranks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The checks beside NCCL ({@link NcclShadow}), over real tcp groups in this JVM: ranks that call different
 * collectives fail with a mismatch naming both, and a peer whose connection drops fails the pending NCCL work
 * naming it, both long before the group's timeout and while NCCL (a double here) would still be waiting.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NcclShadowTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Vertx vertx;
    private Ranks tcp;
    private final List<RecordingNccl> nccls = new ArrayList<>();
    private final List<FakeStream> streams = new ArrayList<>();
    private final List<NcclBackend> backends = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        tcp = Ranks.create(BackendProvider.named("tcp"), vertx, 2, TIMEOUT, Map.of());
        for (int r = 0; r < 2; r++) {
            RecordingNccl nccl = new RecordingNccl();
            FakeStream stream = new FakeStream();
            BackendOptions o = new BackendOptions(r, 2, new MemoryStore(TIMEOUT), TIMEOUT, "g", null, vertx, null);
            NcclBackend b = new NcclBackend(o, nccl, 0x1000 + r, stream, FakeStream.buffer(0x9000, DType.FLOAT32, 1));
            b.useShadow(NcclShadow.over(tcp.get(r), b::abort));
            nccls.add(nccl);
            streams.add(stream);
            backends.add(b);
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (NcclBackend b : backends) {
            b.close().await(10, TimeUnit.SECONDS);
        }
        tcp.close();
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private static Throwable failureWithin(Future<?> f, long seconds) {
        try {
            f.await(seconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (f.isComplete()) {
                return f.cause();
            }
            return fail("not finished within " + seconds + " s: it hangs");
        }
        return fail("succeeded but should have failed");
    }

    @Test
    void matchingCollectivesCompleteWithoutAnAbort() throws Exception {
        streams.forEach(s -> s.autoFinish = true);
        for (int k = 0; k < 5; k++) {
            List<Future<Void>> fs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                fs.add(backends.get(r).allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 10), ReduceOp.SUM));
                fs.add(backends.get(r).broadcast(FakeStream.buffer(0x200, DType.INT64, 3), 1));
            }
            for (Future<Void> f : fs) {
                f.await(10, TimeUnit.SECONDS);
            }
        }
        Thread.sleep(200); // the checks run beside the work: give them time to disagree, if they would
        assertEquals(0, nccls.get(0).aborts.get() + nccls.get(1).aborts.get());
    }

    @Test
    void ranksThatCallDifferentCollectivesFailWithAMismatchNamingBoth() {
        Future<Void> reduce = backends.get(0).allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 10), ReduceOp.SUM);
        Future<Void> cast = backends.get(1).broadcast(FakeStream.buffer(0x100, DType.FLOAT32, 10), 0);
        for (Future<Void> f : List.of(reduce, cast)) {
            Throwable t = failureWithin(f, 10);
            assertInstanceOf(CollectiveMismatchException.class, t);
            for (String part : List.of("allReduce", "broadcast", "rank 0", "rank 1", "#1")) {
                assertTrue(t.getMessage().contains(part), "expected '" + part + "' in: " + t.getMessage());
            }
        }
        assertEquals(1, nccls.get(0).aborts.get());
        assertEquals(1, nccls.get(1).aborts.get());
        Throwable later = failureWithin(backends.get(0).barrier(), 5);
        assertInstanceOf(CollectiveMismatchException.class, later);
    }

    @Test
    void aPeerWhoseConnectionDropsFailsThePendingWorkNamingIt() throws Exception {
        Future<Void> pending = backends.get(0).allReduce(FakeStream.buffer(0x100, DType.FLOAT32, 10), ReduceOp.SUM);
        Thread.sleep(100);
        tcp.get(1).close().await(10, TimeUnit.SECONDS); // what rank 1's death looks like to the checks' group
        Throwable t = failureWithin(pending, 10);
        PeerLostException e = assertInstanceOf(PeerLostException.class, t);
        assertEquals(1, e.peer(), e.getMessage());
        assertTrue(e.getMessage().contains("allReduce") && e.getMessage().contains("rank 0"), e.getMessage());
        assertEquals(1, nccls.get(0).aborts.get());
    }
}
