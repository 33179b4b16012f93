package io.tensorbus.sample.embedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service that runs collectives with tensorbus-distributed and the tcp backend alone: process groups
 * work, and neither Hazelcast nor Mutiny came with them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProcessGroupEmbeddingTest {
    @Test
    void threeRanksAllReduceOverTheDefaultBackend() {
        Distributed.spawn(3, pg -> {
            Tensor t = Tensor.full(pg.rank() + 1, DType.FLOAT32, 5);
            pg.allReduce(t, ReduceOp.SUM).await(20, TimeUnit.SECONDS);
            assertEquals(6.0, t.getDouble(4), 0.0);
        });
    }

    @Test
    void noHazelcastNorMutinyIsOnTheClassPath() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("com.hazelcast.core.Hazelcast"));
        assertThrows(ClassNotFoundException.class,
                () -> Class.forName("io.vertx.spi.cluster.hazelcast.HazelcastClusterManager"));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.smallrye.mutiny.Uni"));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.tensorbus.mutiny.UniProcessGroup"));
    }
}
