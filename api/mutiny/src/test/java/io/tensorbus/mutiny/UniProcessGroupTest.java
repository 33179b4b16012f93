package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.P2POp;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniProcessGroupTest {
    private static final Duration LONG = Duration.ofSeconds(20);

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

    @Test
    void theFacesOfTheOtherCollectivesComputeWhatTheGroupDoes() {
        Distributed.spawn(2, pg -> {
            UniProcessGroup uni = new UniProcessGroup(pg);
            int rank = pg.rank();
            uni.monitoredBarrier(LONG, true).await().atMost(LONG);
            Tensor t = Tensor.full(rank + 1, DType.FLOAT32, 2);
            uni.allReduce(t).await().atMost(LONG);
            assertEquals(3.0, t.getDouble(1), 0.0);
            Tensor whole = Tensor.full(rank + 1, DType.FLOAT32, 4);
            Tensor half = Tensor.zeros(2);
            uni.reduceScatterTensor(half, whole).await().atMost(LONG);
            assertEquals(3.0, half.getDouble(0), 0.0);
            Tensor gathered = Tensor.zeros(4);
            uni.allGatherIntoTensor(gathered, Tensor.full(rank, DType.FLOAT32, 2)).await().atMost(LONG);
            assertEquals(1.0, gathered.getDouble(3), 0.0);
            Tensor swapped = Tensor.zeros(2);
            uni.allToAllSingle(swapped, Tensor.full(rank, DType.FLOAT32, 2)).await().atMost(LONG);
            assertEquals(List.of(0.0, 1.0), List.of(swapped.getDouble(0), swapped.getDouble(1)));
            List<Object> objects = uni.broadcastObjectList(new ArrayList<>(List.of("r" + rank)), 1).await()
                    .atMost(LONG);
            assertEquals(List.of("r1"), objects);
            List<Object> atZero = uni.gatherObject(rank * 10, 0).await().atMost(LONG);
            assertEquals(rank == 0 ? List.of(0, 10) : List.of(), atZero);
            Tensor p2p = Tensor.full(rank == 0 ? 7 : 0, DType.FLOAT32, 3);
            uni.batchIsendIrecv(List.of(rank == 0 ? P2POp.isend(p2p, 1) : P2POp.irecv(p2p, 0))).await().atMost(LONG);
            assertEquals(7.0, p2p.getDouble(2), 0.0);
        });
    }

    @Test
    void aCollectiveOnADestroyedGroupFailsItsUni() {
        Distributed.spawn(2, pg -> {
            UniProcessGroup uni = new UniProcessGroup(pg);
            uni.barrier().await().atMost(LONG);
            uni.destroy().await().atMost(LONG);
            Throwable failure = uni.allReduce(Tensor.zeros(1)).onItem().<Throwable>transform(v -> null).onFailure()
                    .recoverWithItem(e -> e).await().atMost(LONG);
            assertNotNull(failure, "an all-reduce on a destroyed group succeeded");
        });
    }
}
