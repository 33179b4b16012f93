package io.tensorbus.distributed;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code batch_isend_irecv} with {@code P2POp}, {@code all_reduce_coalesced} and {@code all_gather_coalesced}, at
 * world sizes 2 and 3, and their bad inputs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CoalescedAndBatchedTest {

    /** PyTorch's example: each rank sends {@code arange(2) + 2 * rank} to the next and receives from the previous. */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void batchIsendIrecvPassesTensorsAroundARingAsInPyTorchsExample(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            int next = (r + 1) % world;
            int previous = (r - 1 + world) % world;
            Tensor send = Tensor.of(new long[] {2L * r, 2L * r + 1});
            Tensor recv = Tensor.zeros(DType.INT64, 2);
            List<Future<?>> requests = pg.batchIsendIrecv(List.of(P2POp.isend(send, next),
                    P2POp.irecv(recv, previous)));
            assertEquals(2, requests.size());
            for (Future<?> f : requests) {
                f.await(10, TimeUnit.SECONDS);
            }
            assertEquals(previous, requests.get(1).result());
            assertArrayEquals(new long[] {2L * previous, 2L * previous + 1}, recv.toLongArray(), "rank " + r);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allReduceCoalescedReducesEveryTensorInPlace(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            Tensor a = Tensor.full(r + 1, DType.FLOAT32, 3);
            Tensor b = Tensor.full(10 * (r + 1), DType.FLOAT32, 2, 2);
            Tensor empty = Tensor.zeros(0);
            pg.allReduceCoalesced(List.of(a, empty, b), ReduceOp.SUM).await(10, TimeUnit.SECONDS);
            double sum = world * (world + 1) / 2.0;
            assertArrayEquals(new float[] {(float) sum, (float) sum, (float) sum}, a.toFloatArray());
            assertArrayEquals(new float[] {(float) (10 * sum), (float) (10 * sum), (float) (10 * sum),
                    (float) (10 * sum)}, b.toFloatArray());
            assertArrayEquals(new int[] {2, 2}, b.shape(), "shapes are kept");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void allGatherCoalescedGathersEveryInputOfEveryRank(int world) {
        Distributed.spawn(world, pg -> {
            int r = pg.rank();
            List<Tensor> inputs = List.of(Tensor.full(r, DType.INT64, 2), Tensor.full(-r, DType.INT64, 1, 3));
            List<List<Tensor>> outputs = new ArrayList<>();
            for (int p = 0; p < world; p++) {
                outputs.add(List.of(Tensor.zeros(DType.INT64, 2), Tensor.zeros(DType.INT64, 1, 3)));
            }
            pg.allGatherCoalesced(outputs, inputs).await(10, TimeUnit.SECONDS);
            for (int p = 0; p < world; p++) {
                assertArrayEquals(new long[] {p, p}, outputs.get(p).get(0).toLongArray(), "from rank " + p);
                assertArrayEquals(new long[] {-p, -p, -p}, outputs.get(p).get(1).toLongArray(), "from rank " + p);
            }
        });
    }

    @Test
    void badOpsListsAndShapesAreRefusedNamingWhatIsAllowed() {
        Distributed.spawn(2, pg -> {
            int other = 1 - pg.rank();
            var e = assertThrows(IllegalArgumentException.class, () -> pg.batchIsendIrecv(List.of()));
            assertTrue(e.getMessage().contains("at least one P2POp"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> pg.batchIsendIrecv(
                    List.of(P2POp.isend(Tensor.zeros(1), other), P2POp.irecv(Tensor.zeros(1), pg.rank()))));
            assertTrue(e.getMessage().contains("ops[1].peer"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.batchIsendIrecv(List.of(P2POp.isend(Tensor.zeros(1), 2))));
            assertTrue(e.getMessage().contains("ops[0].peer=2"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> new P2POp(P2POp.Kind.ISEND, Tensor.zeros(1), other, -1));
            assertTrue(e.getMessage().contains("tag=-1"), e.getMessage());

            e = assertThrows(IllegalArgumentException.class, () -> pg.allReduceCoalesced(List.of(), ReduceOp.SUM));
            assertTrue(e.getMessage().contains("at least one tensor"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> pg.allReduceCoalesced(
                    List.of(Tensor.zeros(2), Tensor.zeros(DType.INT64, 2)), ReduceOp.SUM));
            assertTrue(e.getMessage().contains("tensors[1] is int64"), e.getMessage());
            List<Tensor> inputs = List.of(Tensor.zeros(2));
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.allGatherCoalesced(List.of(List.of(Tensor.zeros(2))), inputs));
            assertTrue(e.getMessage().contains("one per rank (2)"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> pg.allGatherCoalesced(
                    List.of(List.of(Tensor.zeros(2)), List.of(Tensor.zeros(3))), inputs));
            assertTrue(e.getMessage().contains("outputs[1][0] is float32 with 3 elements"), e.getMessage());
        });
    }
}
