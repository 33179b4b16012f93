package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The tutorial's all-reduce over {@code new_group([0, 1])}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GroupAllReduceTest {
    @Test
    void bothRanksOfTheWorldSumToTwo() {
        AtomicReferenceArray<Tensor> data = new AtomicReferenceArray<>(2);
        Distributed.spawn(2, pg -> data.set(pg.rank(), GroupAllReduce.run(pg, PointToPointExamplesTest.nowhere())));
        assertEquals(2.0, data.get(0).getDouble(0), 0.0);
        assertEquals(2.0, data.get(1).getDouble(0), 0.0);
    }

    @Test
    void inAWorldOfFourOnlyRanksZeroAndOneReduce() {
        AtomicReferenceArray<Tensor> data = new AtomicReferenceArray<>(4);
        Distributed.spawn(4, pg -> data.set(pg.rank(), GroupAllReduce.run(pg, PointToPointExamplesTest.nowhere())));
        assertEquals(2.0, data.get(0).getDouble(0), 0.0);
        assertEquals(2.0, data.get(1).getDouble(0), 0.0);
        assertEquals(1.0, data.get(2).getDouble(0), 0.0);
        assertEquals(1.0, data.get(3).getDouble(0), 0.0);
    }
}
