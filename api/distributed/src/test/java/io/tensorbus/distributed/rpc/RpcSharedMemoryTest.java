package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers of one host call each other through shared memory: chosen by themselves, gone from {@code /dev/shm}
 * once mapped, carrying messages larger than a ring, a tensor sent as it was when the call was made, and TCP
 * when the setting or the directory says no.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcSharedMemoryTest {
    private static final String SHARED = "num_shared_memory_connections";
    private final RpcWorkers workers = new RpcWorkers();

    @AfterEach
    void tearDown() throws Exception {
        workers.close();
    }

    private List<RpcAgent> start(int n, IntFunction<RpcOptions.Builder> options) throws Exception {
        return workers.start(n, options).all();
    }

    /** The channel files this JVM made that still exist. */
    private static List<Path> ourFiles() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            String prefix = "tensorbus-" + ProcessHandle.current().pid() + "-";
            return files.filter(f -> f.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    private static Tensor ramp(int n) {
        return Tensor.arange(0, n, 1, DType.FLOAT32);
    }

    @Test
    void callsBetweenWorkersOfOneHostGoThroughSharedMemoryAndLeaveNoFile() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().timeout(Duration.ofSeconds(20)));
        Tensor big = ramp(3 << 20); // 12 MiB, three times a ring
        Tensor back = w.get(0).rpcSync("worker1", "builtin.echo", big);
        assertArrayEquals(big.toFloatArray(), back.toFloatArray());
        Tensor sum = w.get(1).rpcSync("worker0", "builtin.add", Tensor.ones(3), 2.0);
        assertArrayEquals(new float[] {3, 3, 3}, sum.toFloatArray());
        for (int r = 0; r < 2; r++) {
            assertEquals(2, workers.info(r, SHARED), "worker" + r + " calls out and is called through shared memory");
        }
        assertEquals(List.of(), ourFiles(), "channel files are deleted once both sides mapped them");
    }

    /** What is held or pending is 0 on every worker after a graceful shutdown: connections, calls, references. */
    @Test
    void everyCountOfHeldThingsIsZeroAfterAGracefulShutdown() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().timeout(Duration.ofSeconds(20)));
        RRef<Tensor> ref = w.get(0).remote("worker1", "builtin.add", Tensor.ones(3), 1.0);
        assertArrayEquals(new float[] {2, 2, 2}, ref.toHere().toFloatArray());
        Tensor back = w.get(1).rpcSync("worker0", "builtin.echo", ramp(1000));
        assertEquals(999, back.getDouble(999));
        assertEquals(2, workers.info(0, SHARED));
        ref.close();
        List<CompletableFuture<Void>> stops = new ArrayList<>();
        for (RpcAgent a : w) {
            stops.add(CompletableFuture.runAsync(a::shutdown));
        }
        for (var stop : stops) {
            stop.get(60, TimeUnit.SECONDS);
        }
        for (int r = 0; r < 2; r++) {
            Map<String, Long> info = w.get(r).debugInfo();
            for (String held : List.of("num_owner_rrefs", "num_user_rrefs", "num_pending_rref_messages",
                    "num_pending_calls", SHARED)) {
                assertEquals(0, info.get(held), "worker" + r + " " + held + " after shutdown: " + info);
            }
        }
    }

    @Test
    void manyCallsInFlightAnswerInAnyOrderThroughSmallRings() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().sharedMemoryRingBytes(64 << 10)
                .timeout(Duration.ofSeconds(30)));
        List<Future<Tensor>> calls = new ArrayList<>();
        List<Tensor> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Tensor t = ramp(1 + (i * 7919) % 50_000).mul(i);
            sent.add(t);
            calls.add(w.get(0).rpcAsync("worker1", "builtin.echo", t));
        }
        for (int i = 0; i < calls.size(); i++) {
            assertArrayEquals(sent.get(i).toFloatArray(), calls.get(i).await(30, TimeUnit.SECONDS).toFloatArray(),
                    "call " + i);
        }
        assertEquals(1, workers.info(0, SHARED));
    }

    @Test
    void aTensorChangedRightAfterTheCallIsSentAsItWasWhenCalled() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().sharedMemoryRingBytes(64 << 10)
                .timeout(Duration.ofSeconds(20)));
        w.get(0).rpcSync("worker1", "builtin.echo", Tensor.ones(4)); // connected, on shared memory
        Tensor t = ramp(1 << 20); // 4 MiB through a 64 KiB ring
        float[] expected = t.toFloatArray();
        Future<Tensor> echo = w.get(0).rpcAsync("worker1", "builtin.echo", t);
        t.filli(-1);
        assertArrayEquals(expected, echo.await(20, TimeUnit.SECONDS).toFloatArray());
        assertEquals(1, workers.info(0, SHARED));
    }

    @Test
    void theSettingKeepsCallsOnTcp() throws Exception {
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().sharedMemory(r != 1).timeout(Duration.ofSeconds(20)));
        Tensor big = ramp(1 << 20);
        assertArrayEquals(big.toFloatArray(), w.get(0).<Tensor>rpcSync("worker1", "builtin.echo", big).toFloatArray());
        assertArrayEquals(big.toFloatArray(), w.get(1).<Tensor>rpcSync("worker0", "builtin.echo", big).toFloatArray());
        assertEquals(0, workers.info(0, SHARED), "worker1 publishes no shared-memory host, so nobody offers");
        assertEquals(0, workers.info(1, SHARED), "worker0's offer is declined by worker1");
        assertEquals(List.of(), ourFiles());
    }

    @Test
    void aDirectoryWithoutRoomKeepsCallsOnTcp() throws Exception {
        // /proc reports no free space: the channel cannot be made, and the call goes over the socket.
        List<RpcAgent> w = start(2, r -> RpcOptions.builder().sharedMemoryDir(Path.of("/proc"))
                .timeout(Duration.ofSeconds(20)));
        assertEquals(5L, (long) w.get(0).rpcSync("worker1", "builtin.add", 2L, 3L));
        assertEquals(0, workers.info(0, SHARED));
    }

    @Test
    void badRingSizesAreRefusedNamingWhatIsAllowed() {
        for (long bad : new long[] {0, 1000, 32 << 10, (64 << 10) + 1, 2L << 30}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RpcOptions.builder().sharedMemoryRingBytes(bad));
            assertTrue(e.getMessage().contains("power of two from 65536 to 1073741824"), e.getMessage());
        }
    }
}
