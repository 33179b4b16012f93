package io.tensorbus.distributed;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad arguments fail at the call, on the calling rank, with a message that says what is allowed. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProcessGroupArgumentsTest {

    private static String message(Runnable r) {
        return assertThrows(RuntimeException.class, r::run).getMessage();
    }

    @Test
    void ranksOutsideTheGroupAreRefusedNamingTheSize() {
        Distributed.spawn(2, pg -> {
            Tensor t = Tensor.zeros(2);
            assertEquals("dst=5 is not a member of this group (global ranks [0, 1]); dst is a global rank,"
                    + " GroupRank.of(r) names a rank of the group", message(() -> pg.isend(t, 5)));
            assertTrue(message(() -> pg.irecv(t, -3)).contains("src=-3"));
            assertTrue(message(() -> pg.broadcast(t, 2)).contains("src=2 is not a member"));
            assertEquals("group src=2 is not a rank of this group (size 2)",
                    message(() -> pg.broadcast(t, GroupRank.of(2))));
            assertTrue(message(() -> GroupRank.of(-1)).contains("must be >= 0"));
            assertTrue(message(() -> pg.reduce(t, -1)).contains("dst=-1"));
            assertTrue(message(() -> pg.isend(t, pg.rank())).contains("own rank"));
            assertTrue(message(() -> pg.isend(t, 1 - pg.rank(), -1)).contains("tag=-1"));
        });
    }

    @Test
    void tensorsMustBeContiguousAndListsOnePerRank() {
        Distributed.spawn(2, pg -> {
            Tensor m = Tensor.zeros(2, 3).transpose(0, 1);
            assertTrue(message(() -> pg.allReduce(m)).contains("contiguous"));
            Tensor t = Tensor.zeros(3);
            assertTrue(message(() -> pg.allGather(List.of(Tensor.zeros(3)), t)).contains("one per rank (2)"));
            assertTrue(message(() -> pg.allGather(List.of(Tensor.zeros(3), Tensor.zeros(4)), t))
                    .contains("must match float32 with 3 elements"));
            assertTrue(message(() -> pg.allReduce(Tensor.zeros(DType.INT64, 2), ReduceOp.AVG)).contains("AVG"));
            assertTrue(message(() -> pg.allReduce(t, ReduceOp.BXOR)).contains("bitwise"));
            assertTrue(message(() -> pg.gather(t, List.of(t, t), 1 - pg.rank())).contains("must be empty"));
        });
    }

    @Test
    void recvIntoTheWrongSizeOrDtypeFailsNamingBoth() {
        Distributed.spawn(2, pg -> {
            if (pg.rank() == 0) {
                pg.send(Tensor.zeros(4), 1);
                pg.send(Tensor.zeros(4), 1, 1);
            } else {
                Throwable size = assertThrows(Throwable.class, () -> pg.recv(Tensor.zeros(5), 0));
                assertTrue(size.getMessage().contains("16 bytes") && size.getMessage().contains("20 bytes"),
                        size.getMessage());
                Throwable dtype = assertThrows(Throwable.class, () -> pg.recv(Tensor.zeros(DType.INT32, 4), 0, 1));
                assertTrue(dtype.getMessage().contains("float32") && dtype.getMessage().contains("int32"),
                        dtype.getMessage());
            }
        });
    }

    @Test
    void nonMembersOfASubgroupGetAHandleWhoseOperationsDoNothing() {
        Distributed.spawn(3, pg -> {
            ProcessGroup sub = Distributed.newGroup(pg, 0, 2).await(20, TimeUnit.SECONDS);
            if (pg.rank() == 1) {
                assertFalse(sub.isMember());
                assertEquals(-1, sub.rank());
                assertTrue(sub.barrier().succeeded(), "a completed no-op, as in PyTorch");
            } else {
                assertEquals(pg.rank() == 0 ? 0 : 1, sub.rank());
                Tensor t = Tensor.full(pg.rank(), DType.FLOAT32, 2);
                sub.allReduce(t).await(20, TimeUnit.SECONDS);
                assertEquals(2.0, t.getDouble(1), 0.0);
                sub.destroy().await(10, TimeUnit.SECONDS);
            }
            assertTrue(message(() -> Distributed.newGroup(pg, 0, 0)).contains("twice"));
            assertTrue(message(() -> Distributed.newGroup(pg, 0, 7)).contains("not a member"));
        });
    }
}
