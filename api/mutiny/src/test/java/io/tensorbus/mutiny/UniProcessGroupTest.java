package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniProcessGroupTest {
    @Test
    void mutinyViewRunsTheOperationOnSubscription() {
        Distributed.spawn(2, pg -> {
            UniProcessGroup uni = new UniProcessGroup(pg);
            Tensor t = Tensor.full(3, DType.FLOAT32, 4);
            uni.allReduce(t, ReduceOp.MAX).await().atMost(Duration.ofSeconds(20));
            assertEquals(3.0, t.getDouble(0), 0.0);
            List<Object> all = uni.allGatherObject(pg.rank()).await().atMost(Duration.ofSeconds(20));
            assertEquals(List.of(0, 1), all);
        });
    }
}
