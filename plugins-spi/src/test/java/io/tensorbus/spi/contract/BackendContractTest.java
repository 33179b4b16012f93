package io.tensorbus.spi.contract;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DType;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.ReduceOp;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The contract every {@link Backend} keeps, run by each backend module (extend this class and return the
 * provider). Ranks are backends in this JVM sharing a {@link MemoryStore}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class BackendContractTest {
    protected Vertx vertx;

    /** The provider under test. */
    protected abstract BackendProvider provider();

    /** Backend settings for the tests (none by default). */
    protected Map<String, String> properties() {
        return Map.of();
    }

    @BeforeAll
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    void stopVertx() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    protected Ranks ranks(int n) throws Exception {
        return Ranks.create(provider(), vertx, n, Duration.ofSeconds(20), properties());
    }

    protected static DeviceBuffer floats(long n, IntFunction<Float> value) {
        MemorySegment s = Arena.ofAuto().allocate(n * 4, 64);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, value.apply(i));
        }
        return DeviceBuffer.host(s, DType.FLOAT32, n);
    }

    protected static float at(DeviceBuffer b, long i) {
        return b.segment().getAtIndex(ValueLayout.JAVA_FLOAT, i);
    }

    /** Runs {@code op} on every rank at once and waits for all. */
    protected static <T> List<T> onAll(Ranks ranks, java.util.function.IntFunction<Future<T>> op) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            fs.add(op.apply(r));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            out.add(f.await(60, TimeUnit.SECONDS));
        }
        return out;
    }

    @Test
    void allReduceSumsAcrossThreeRanks() throws Exception {
        for (long n : new long[] {1, 1000, 300_000}) {
            try (Ranks ranks = ranks(3)) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    int rr = r;
                    bufs.add(floats(n, i -> (float) (rr + i % 7)));
                }
                onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
                for (int r = 0; r < 3; r++) {
                    for (long i = 0; i < n; i += Math.max(1, n / 97)) {
                        assertEquals(3 + 3 * (i % 7), at(bufs.get(r), i), "rank " + r + " element " + i + " of " + n);
                    }
                }
            }
        }
    }

    @Test
    void broadcastCopiesTheRootsBufferToEveryRank() throws Exception {
        for (long n : new long[] {5, 1_000_000}) {
            try (Ranks ranks = ranks(4)) {
                List<DeviceBuffer> bufs = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    int rr = r;
                    bufs.add(floats(n, i -> rr == 2 ? i : -1f));
                }
                onAll(ranks, r -> ranks.get(r).broadcast(bufs.get(r), 2));
                for (int r = 0; r < 4; r++) {
                    assertEquals(n - 1, at(bufs.get(r), n - 1), "rank " + r);
                    assertEquals(0, at(bufs.get(r), 0), "rank " + r);
                }
            }
        }
    }

    @Test
    void sendAndRecvMatchByTag() throws Exception {
        try (Ranks ranks = ranks(2)) {
            DeviceBuffer a = floats(10, i -> 1f);
            DeviceBuffer b = floats(10, i -> 2f);
            DeviceBuffer x = floats(10, i -> 0f);
            DeviceBuffer y = floats(10, i -> 0f);
            Future<Integer> ry = ranks.get(1).recv(y, 0, 7);
            Future<Integer> rx = ranks.get(1).recv(x, Backend.ANY_SOURCE, 3);
            ranks.get(0).send(a, 1, 3).await(10, TimeUnit.SECONDS);
            ranks.get(0).send(b, 1, 7).await(10, TimeUnit.SECONDS);
            assertEquals(0, rx.await(10, TimeUnit.SECONDS));
            assertEquals(0, ry.await(10, TimeUnit.SECONDS));
            assertEquals(1f, at(x, 9));
            assertEquals(2f, at(y, 9));
        }
    }
}
