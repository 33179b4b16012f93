package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ranks as PyTorch 2.x means them: {@code src}/{@code dst} are global ranks on every group, {@link GroupRank} is
 * {@code group_src}/{@code group_dst}, and a receive answers the sender's global rank. The subgroup is the last two
 * global ranks, so group rank r is global rank {@code world - 2 + r} and the numberings differ.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GlobalAndGroupRanksTest {

    private static ProcessGroup lastTwo(ProcessGroup pg, int world) throws Exception {
        return Distributed.newGroup(pg, world - 2, world - 1).await(10, TimeUnit.SECONDS);
    }

    @Test
    void aRankOutsideTheGroupGetsCompletedNoOpsAndOneWarningAsInPyTorch() {
        Logger log = Logger.getLogger(ProcessGroup.class.getName());
        List<String> warnings = Collections.synchronizedList(new ArrayList<>());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                warnings.add(MessageFormat.format(r.getMessage(), r.getParameters()));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(handler);
        try {
            Distributed.spawn(3, pg -> {
                ProcessGroup g = lastTwo(pg, 3);
                if (g.isMember()) {
                    g.allReduce(Tensor.ones(2)).await(10, TimeUnit.SECONDS);
                    return;
                }
                Tensor t = Tensor.ones(2);
                // Nothing is thrown, whatever the arguments: nothing runs here.
                List<Future<?>> ops = List.of(g.allReduce(t), g.broadcast(t, 0), g.barrier(), g.isend(t, 5),
                        g.allGatherObject("x"));
                for (Future<?> f : ops) {
                    assertTrue(f.succeeded(), "completed at once: " + f);
                }
                assertEquals(-1, g.irecv(t, 1).result());
                assertEquals(-1, g.recv(t, 1, 0));
                assertArrayEquals(new float[] {1, 1}, t.toFloatArray(), "untouched");
                assertTrue(Distributed.newGroup(g, new int[] {1}).failed(), "making groups from it fails its future");
            });
        } finally {
            log.removeHandler(handler);
        }
        assertEquals(1, warnings.stream().filter(w -> w.contains("which it is not a member of")).count(), warnings
                .toString());
        assertTrue(warnings.getFirst().contains("global rank 0 ran allReduce on group"), warnings.toString());
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void collectivesTakeGlobalRanksAndGroupRanksAsGroupRank(int world) {
        Distributed.spawn(world, pg -> {
            ProcessGroup g = lastTwo(pg, world);
            if (!g.isMember()) {
                return;
            }
            int me = pg.rank();
            int last = world - 1;
            Tensor fromLast = Tensor.of(new float[] {me});
            g.broadcast(fromLast, last).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {last}, fromLast.toFloatArray(), "broadcast from global rank " + last);

            Tensor fromFirst = Tensor.of(new float[] {me});
            g.broadcast(fromFirst, GroupRank.of(0)).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {world - 2}, fromFirst.toFloatArray(), "broadcast from group rank 0");

            Tensor sum = Tensor.of(new double[] {me});
            g.reduce(sum, last, ReduceOp.SUM).await(10, TimeUnit.SECONDS);
            assertEquals(me == last ? 2 * world - 3 : me, sum.toDoubleArray()[0], 0, "reduce into global " + last);

            List<Tensor> outs = new ArrayList<>();
            if (me == last) {
                outs.add(Tensor.zeros(DType.INT64, 1));
                outs.add(Tensor.zeros(DType.INT64, 1));
            }
            g.gather(Tensor.of(new long[] {me}), outs, last).await(10, TimeUnit.SECONDS);
            if (me == last) {
                assertEquals(world - 2, outs.get(0).toLongArray()[0], "gather lists group-rank order");
                assertEquals(last, outs.get(1).toLongArray()[0]);
            }
            List<Object> objects = g.gatherObject("rank " + me, GroupRank.of(1)).await(10, TimeUnit.SECONDS);
            assertEquals(me == last ? List.of("rank " + (world - 2), "rank " + last) : List.of(), objects);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void pointToPointNamesGlobalRanksAndAnswersTheSendersGlobalRank(int world) {
        Distributed.spawn(world, pg -> {
            ProcessGroup g = lastTwo(pg, world);
            if (!g.isMember()) {
                return;
            }
            int me = pg.rank();
            int peer = me == world - 1 ? world - 2 : world - 1;
            Tensor t = Tensor.of(new float[] {me});
            if (g.rank() == 0) {
                g.send(t, peer);
                g.send(t, GroupRank.of(1), 3);
                g.sendObjectList(new ArrayList<>(List.of("hi")), peer).await(10, TimeUnit.SECONDS);
            } else {
                Tensor got = Tensor.zeros(1);
                assertEquals(peer, g.recv(got, peer), "blocking recv from a named global rank");
                assertEquals(peer, g.irecv(got, ProcessGroup.ANY_SOURCE, 3).await(10, TimeUnit.SECONDS),
                        "any-source receive answers the global rank");
                assertArrayEquals(new float[] {peer}, got.toFloatArray());
                List<Object> objects = new ArrayList<>(Arrays.asList((Object) null));
                assertEquals(peer, g.recvObjectList(objects, GroupRank.of(0)).await(10, TimeUnit.SECONDS));
                assertEquals(List.of("hi"), objects);
            }
            List<Future<?>> batch = g.batchIsendIrecv(List.of(P2POp.isend(Tensor.of(new float[] {me}), peer),
                    P2POp.irecv(t, peer)));
            batch.get(1).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {peer}, t.toFloatArray(), "P2POp peers are global ranks");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void ranksOutsideTheSubgroupAreRefusedNamingItsMembers(int world) {
        Distributed.spawn(world, pg -> {
            ProcessGroup g = lastTwo(pg, world);
            if (!g.isMember()) {
                return;
            }
            Tensor t = Tensor.zeros(1);
            int outsider = world;
            var e = assertThrows(IllegalArgumentException.class, () -> g.broadcast(t, outsider));
            assertTrue(e.getMessage().contains("src=" + outsider + " is not a member of this group (global ranks ["
                    + (world - 2) + ", " + (world - 1) + "])"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> g.isend(t, GroupRank.of(2), 0));
            var own = assertThrows(IllegalArgumentException.class, () -> g.isend(t, GroupRank.of(g.rank()), 0));
            assertTrue(own.getMessage().contains("own rank"), own.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> g.batchIsendIrecv(List.of(P2POp.isend(t, outsider))));
            g.barrier().await(10, TimeUnit.SECONDS);
        });
    }
}
