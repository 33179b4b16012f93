package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GroupsAndBarriersTest {

    @Test
    void operationsOnTwoGroupsInterleaveWithoutMixingUp() {
        Distributed.spawn(4, pg -> {
            ProcessGroup even = Distributed.newGroup(pg, 0, 2).await(20, TimeUnit.SECONDS);
            ProcessGroup odd = Distributed.newGroup(pg, 1, 3).await(20, TimeUnit.SECONDS);
            ProcessGroup mine = pg.rank() % 2 == 0 ? even : odd;
            List<Tensor> ts = new ArrayList<>();
            List<Future<Void>> ops = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Tensor a = Tensor.full(pg.rank() + i, DType.FLOAT32, 1000);
                Tensor b = Tensor.full(1, DType.FLOAT32, 5);
                ts.add(a);
                ts.add(b);
                ops.add(mine.allReduce(a));
                ops.add(pg.allReduce(b));
            }
            for (Future<Void> op : ops) {
                op.await(20, TimeUnit.SECONDS);
            }
            for (int i = 0; i < 20; i++) {
                double pair = pg.rank() % 2 == 0 ? 0 + 2 + 2 * i : 1 + 3 + 2 * i;
                assertEquals(pair, ts.get(2 * i).getDouble(999), 0.0);
                assertEquals(4.0, ts.get(2 * i + 1).getDouble(4), 0.0);
            }
            mine.destroy();
        });
    }

    @Test
    void allToAllWithUnevenSplits() {
        Distributed.spawn(3, pg -> {
            List<Tensor> in = new ArrayList<>();
            List<Tensor> out = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                in.add(Tensor.full(10 * pg.rank() + p, DType.INT64, pg.rank() + p));
                out.add(Tensor.zeros(DType.INT64, p + pg.rank()));
            }
            pg.allToAll(out, in).await(20, TimeUnit.SECONDS);
            for (int p = 0; p < 3; p++) {
                long[] expected = new long[p + pg.rank()];
                Arrays.fill(expected, 10L * p + pg.rank());
                assertArrayEquals(expected, out.get(p).toLongArray());
            }
        });
    }

    @Test
    void monitoredBarrierNamesTheRankThatDidNotArrive() {
        Distributed.spawn(3, pg -> {
            if (pg.rank() == 0) {
                Throwable e = assertThrows(Throwable.class, () -> pg.monitoredBarrier(Duration.ofMillis(500), true)
                        .await(10, TimeUnit.SECONDS));
                assertTrue(e instanceof CommunicationTimeoutException, e.toString());
                assertTrue(e.getMessage().contains("[2]"), e.getMessage());
                assertArrayEquals(new int[] {2}, ((CommunicationTimeoutException) e).missingRanks());
            } else if (pg.rank() == 1) {
                assertThrows(Throwable.class, () -> pg.monitoredBarrier(Duration.ofMillis(1500), true)
                        .await(10, TimeUnit.SECONDS));
            }
            pg.barrier().await(20, TimeUnit.SECONDS);
        });
    }

    @Test
    void monitoredBarrierNamesARankThatLeftAsGoneNotLate() {
        Distributed.spawn(2, pg -> {
            if (pg.rank() == 1) {
                pg.close();
                return;
            }
            long start = System.nanoTime();
            Throwable e = assertThrows(Throwable.class, () -> pg.monitoredBarrier(Duration.ofSeconds(20), true)
                    .await(30, TimeUnit.SECONDS));
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            assertTrue(e instanceof CommunicationException && e.getMessage().contains("rank"), e.toString());
            assertTrue(e.getMessage().contains("[1]"), e.getMessage());
            assertTrue(seconds < 20 && !(e instanceof CommunicationTimeoutException)
                    && !e.getMessage().contains("within"), "took " + seconds + " s: " + e);
            assertTrue(e.getCause() != null, "the cause is lost: " + e);
        });
    }

    @Test
    void monitoredBarrierPassesWhenAllArrive() {
        Distributed.spawn(3, pg -> pg.monitoredBarrier(Duration.ofSeconds(10), false).await(20, TimeUnit.SECONDS));
    }

    @Test
    void aFailingRankStopsSpawnAndIsNamed() {
        Throwable e = assertThrows(IllegalStateException.class,
                () -> Distributed.spawn(2, Duration.ofSeconds(30), pg -> {
            if (pg.rank() == 1) {
                throw new IllegalArgumentException("boom");
            }
            pg.allReduce(Tensor.zeros(4)).await(30, TimeUnit.SECONDS);
        }));
        assertTrue(e.getMessage().contains("rank") && e.getMessage().contains("boom")
                || e.getMessage().contains("rank 0"),
                e.getMessage());
    }
}
