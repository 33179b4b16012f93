package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProcessGroupTest {

    @Test
    void allReduceSumsTensorsOfThreeThreadRanks() {
        Distributed.spawn(3, pg -> {
            Tensor t = Tensor.full(pg.rank() + 1, DType.FLOAT32, 4);
            pg.allReduce(t, ReduceOp.SUM).await(10, TimeUnit.SECONDS);
            assertEquals(6f, t.getDouble(3), 0f);
        });
    }

    @Test
    void blockingSendAndRecvAsInTheTutorial() {
        Distributed.spawn(2, pg -> {
            Tensor t = Tensor.zeros(1);
            if (pg.rank() == 0) {
                t.addi(Tensor.full(1, DType.FLOAT32, 1));
                pg.send(t, 1);
            } else {
                assertEquals(0, pg.recv(t, 0));
            }
            assertEquals(1f, t.getDouble(0), 0f);
        });
    }

    @Test
    void objectsAreGatheredInRankOrder() {
        Distributed.spawn(3, pg -> {
            List<Object> all = pg.allGatherObject(List.of("rank", pg.rank())).await(10, TimeUnit.SECONDS);
            assertEquals(List.of("rank", 2), all.get(2));
            List<Object> objs = new ArrayList<>(List.of("x", 0));
            if (pg.rank() == 1) {
                objs.set(0, "from one");
            }
            pg.broadcastObjectList(objs, 1).await(10, TimeUnit.SECONDS);
            assertEquals("from one", objs.get(0));
        });
    }

    @Test
    void anInputBuiltInlineStaysAliveUntilItsCollectiveCompletes() {
        // A device tensor's memory goes back when the tensor is unreachable, and backends hold only buffers: the
        // group must keep an input the caller no longer references until the collective has read it.
        Distributed.spawn(2, pg -> {
            List<Tensor> outs = List.of(Tensor.zeros(4), Tensor.zeros(4));
            if (pg.rank() == 1) {
                sleep(300); // rank 0's allGather waits for this one meanwhile
                pg.allGather(outs, Tensor.full(2, DType.FLOAT32, 4)).await(10, TimeUnit.SECONDS);
                return;
            }
            Tensor[] holder = {Tensor.full(1, DType.FLOAT32, 4)};
            WeakReference<Tensor> input = new WeakReference<>(holder[0]);
            var done = pg.allGather(outs, holder[0]);
            holder[0] = null;
            while (!done.isComplete()) {
                System.gc();
                assertTrue(done.isComplete() || input.get() != null, "the input was collected mid-collective");
                sleep(20);
            }
            done.await(10, TimeUnit.SECONDS);
            assertEquals(2f, outs.get(1).getDouble(3), 0f);
        });
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
