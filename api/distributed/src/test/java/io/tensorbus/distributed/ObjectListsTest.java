package io.tensorbus.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code gather_object}, {@code scatter_object_list}, {@code send_object_list} and {@code recv_object_list} as
 * PyTorch's documentation shows them (its objects {@code ["foo", 12, {1: 2}]}), at world sizes 2 and 3, and their
 * bad inputs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ObjectListsTest {
    private static final List<Object> OBJECTS = List.of("foo", 12L, Map.of(1, 2));

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void gatherObjectCollectsEveryRanksObjectOnTheDestinationOnly(int world) {
        Distributed.spawn(world, pg -> {
            List<Object> got = pg.gatherObject(OBJECTS.get(pg.rank()), 0).await(10, TimeUnit.SECONDS);
            assertEquals(pg.rank() == 0 ? OBJECTS.subList(0, world) : List.of(), got, "rank " + pg.rank());
            // Objects of very different lengths, gathered on the last rank.
            List<Object> sized = pg.gatherObject("x".repeat(1 + 5000 * pg.rank()), world - 1)
                    .await(10, TimeUnit.SECONDS);
            if (pg.rank() == world - 1) {
                for (int r = 0; r < world; r++) {
                    assertEquals(1 + 5000 * r, ((String) sized.get(r)).length());
                }
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void scatterObjectListGivesRankRTheRthObject(int world) {
        Distributed.spawn(world, pg -> {
            List<Object> output = new ArrayList<>(Arrays.asList((Object) null));
            List<Object> inputs = pg.rank() == 0 ? OBJECTS.subList(0, world) : null;
            pg.scatterObjectList(output, inputs, 0).await(10, TimeUnit.SECONDS);
            assertEquals(OBJECTS.get(pg.rank()), output.get(0), "rank " + pg.rank());
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void sendObjectListArrivesWholeAndApartFromTensorMessages(int world) {
        Distributed.spawn(world, pg -> {
            int last = world - 1;
            if (pg.rank() == 0) {
                pg.send(Tensor.ones(2), last);
                pg.sendObjectList(OBJECTS, last).await(10, TimeUnit.SECONDS);
            } else if (pg.rank() == last) {
                List<Object> objects = new ArrayList<>(Arrays.asList(null, null, null));
                assertEquals(0, pg.recvObjectList(objects, ProcessGroup.ANY_SOURCE).await(10, TimeUnit.SECONDS));
                assertEquals(OBJECTS, objects);
                Tensor t = Tensor.zeros(2);
                pg.recv(t, 0);
                assertEquals(1.0, t.getDouble(1), 0.0);
            }
        });
    }

    @Test
    void badListsAndRanksAreRefusedNamingWhatIsAllowed() {
        Distributed.spawn(2, pg -> {
            var e = assertThrows(IllegalArgumentException.class, () -> pg.gatherObject("x", 2));
            assertTrue(e.getMessage().contains("dst"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> pg.scatterObjectList(new ArrayList<>(), List.of(1, 2), 0));
            assertTrue(e.getMessage().contains("at least one element"), e.getMessage());
            if (pg.rank() == 0) {
                e = assertThrows(IllegalArgumentException.class,
                        () -> pg.scatterObjectList(new ArrayList<>(List.of(0)), List.of(1, 2, 3), 0));
                assertTrue(e.getMessage().contains("must pass one per rank (2)"), e.getMessage());
                e = assertThrows(IllegalArgumentException.class, () -> pg.sendObjectList(List.of(1), 0));
                assertTrue(e.getMessage().contains("own rank"), e.getMessage());
                pg.sendObjectList(List.of(1, 2), 1).await(10, TimeUnit.SECONDS);
            } else {
                List<Object> tooShort = new ArrayList<>(List.of(0));
                Exception failure = assertThrows(Exception.class,
                        () -> pg.recvObjectList(tooShort, 0).await(10, TimeUnit.SECONDS));
                assertTrue(failure.getMessage().contains("rank 0 sent 2 objects but this rank's list holds 1"),
                        failure.getMessage());
            }
        });
    }
}
