package io.tensorbus.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.DeviceRuntimeProvider;
import io.tensorbus.spi.contract.Buffers;
import io.tensorbus.spi.contract.DeviceStagedBackend;
import io.tensorbus.spi.contract.Ranks;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real NCCL library on one GPU: a group of one rank makes its communicator through the store and runs
 * collectives on {@code cuda:0}. What the three-GPU contract suite checks at full width, this checks on the
 * machines that have one GPU; skipped, saying why, without CUDA and NCCL.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NcclOneRankTest {

    @Test
    void aGroupOfOneRunsItsCollectivesThroughNcclOnTheDevice() throws Exception {
        CudaAvailable.assumeNccl("the one-rank nccl check", 1);
        Vertx vertx = Vertx.vertx();
        Device cuda0 = new Device(CudaRuntimeProvider.TYPE, 0);
        DeviceRuntime runtime = DeviceRuntimeProvider.of(cuda0);
        try (Ranks ranks = Ranks.create(BackendProvider.named(NcclBackendProvider.NAME), vertx, 1,
                Duration.ofSeconds(30), Map.of(), JobSecret.random(),
                b -> new DeviceStagedBackend(b, runtime, cuda0))) {
            Backend rank0 = ranks.get(0);
            DeviceBuffer x = Buffers.vector(DType.FLOAT32, 1000);
            for (int i = 0; i < 1000; i++) {
                Buffers.put(x, i, i * 0.5);
            }
            rank0.allReduce(x, ReduceOp.SUM).await(30, TimeUnit.SECONDS);
            rank0.allReduce(x, ReduceOp.AVG).await(30, TimeUnit.SECONDS);
            rank0.broadcast(x, 0).await(30, TimeUnit.SECONDS);
            DeviceBuffer out = Buffers.vector(DType.FLOAT32, 1000);
            rank0.allGather(List.of(out), x).await(30, TimeUnit.SECONDS);
            rank0.barrier().await(30, TimeUnit.SECONDS);
            for (int i = 0; i < 1000; i += 99) {
                assertEquals(i * 0.5, Buffers.get(x, i), "element " + i + " after one rank's collectives");
                assertEquals(i * 0.5, Buffers.get(out, i), "element " + i + " of the all-gather");
            }
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
