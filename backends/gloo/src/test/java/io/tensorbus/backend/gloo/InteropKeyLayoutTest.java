package io.tensorbus.backend.gloo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.PyTorchTcpStore;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two JVM ranks in interop mode leave in the store the keys a PyTorch process of each wire looks for: its
 * {@code init_process_group} and {@code new_group} (from {@code distributed_c10d.py} at 1.13 and at 2.2+) and its
 * gloo rendezvous. Needs
 * no Python: a third client of the wire reads the keys back.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class InteropKeyLayoutTest {
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private Future<ProcessGroup> init(PyTorchWire wire, int port, int rank) {
        return Distributed.initProcessGroup(InitOptions.builder().backend("gloo").pytorchInterop(wire)
                .initMethod("tcp://127.0.0.1:" + port).rank(rank).worldSize(2).timeout(Duration.ofSeconds(30))
                .environment(Map.of()).secret(JobSecret.none()).vertx(vertx).build());
    }

    /**
     * Joins two JVM ranks on {@code wire}, all-reduces, makes group "1" of both and all-reduces there, and answers
     * which of {@code keys} a third client finds.
     */
    private List<Boolean> joinAndLook(PyTorchWire wire, List<String> keys) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Future<ProcessGroup> r0 = init(wire, port, 0);
        Future<ProcessGroup> r1 = init(wire, port, 1);
        try (ProcessGroup a = r0.await(60, TimeUnit.SECONDS); ProcessGroup b = r1.await(60, TimeUnit.SECONDS)) {
            Tensor x = Tensor.of(new float[] {1, 2}, 2);
            Tensor y = Tensor.of(new float[] {10, 20}, 2);
            Future.all(a.allReduce(x), b.allReduce(y)).await(30, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {11, 22}, x.toFloatArray());
            Future<ProcessGroup> s0 = Distributed.newGroup(a, 0, 1);
            Future<ProcessGroup> s1 = Distributed.newGroup(b, 0, 1);
            ProcessGroup sa = s0.await(30, TimeUnit.SECONDS);
            ProcessGroup sb = s1.await(30, TimeUnit.SECONDS);
            Future.all(sa.allReduce(x), sb.allReduce(y)).await(30, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {22, 44}, y.toFloatArray());
            PyTorchTcpStore look = PyTorchTcpStore.connect(vertx, "127.0.0.1", port, Duration.ofSeconds(10), wire)
                    .await(10, TimeUnit.SECONDS);
            try {
                List<Boolean> found = new ArrayList<>();
                for (String k : keys) {
                    found.add(look.check(List.of(k)).await(10, TimeUnit.SECONDS));
                }
                return found;
            } finally {
                look.close();
            }
        }
    }

    @Test
    void onThe113WireTheGroupSitsUnderDefaultPg0WithTheStoreBasedBarrier() throws Exception {
        assertEquals(List.of(true, true, true, true, true, false, true, true, true), joinAndLook(PyTorchWire.V1_13,
                List.of("default_pg/0/0/0", "default_pg/0/0/1", "default_pg/0/0/rank_1",
                        "default_pg/store_based_barrier_key:1", "default_pg/0/SEQ_NUM_STORE_KEY",
                        "default_pg/0//cpu//0/0", "default_pg/1/0/1", "default_pg/store_based_barrier_key:2",
                        "default_pg/1/SEQ_NUM_STORE_KEY")));
    }

    @Test
    void onThe22WireTheGroupSitsUnderItsDeviceWithNoStoreBasedBarrier() throws Exception {
        assertEquals(List.of(true, true, true, false, false, true, false), joinAndLook(PyTorchWire.V2_2, List.of(
                "default_pg/0//cpu//0/0", "default_pg/0//cpu//0/1", "default_pg/0//cpu//SEQ_NUM_STORE_KEY",
                "default_pg/store_based_barrier_key:1", "default_pg/0/0/rank_1", "default_pg/0//1//cpu//0/1",
                "default_pg/store_based_barrier_key:2")));
    }
}
