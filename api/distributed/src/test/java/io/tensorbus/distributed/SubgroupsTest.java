package io.tensorbus.distributed;

import io.tensorbus.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code new_subgroups}, {@code new_subgroups_by_enumeration}, {@code split_group} and {@code new_group} with a
 * timeout and a backend, as PyTorch's documentation shows them (an all-reduce of {@code ones * rank} in each
 * subgroup), and their bad inputs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SubgroupsTest {

    /** The sum of {@code ones * rank} over {@code group}: what each member of it must see. */
    private static double sumInto(ProcessGroup group, int globalRank) throws Exception {
        Tensor t = Tensor.ones(1).mul(globalRank);
        group.allReduce(t).await(10, TimeUnit.SECONDS);
        return t.getDouble(0);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void newSubgroupsSplitsConsecutiveRanksAsInPyTorchsExample(int world) {
        Distributed.spawn(world, pg -> {
            int groupSize = world % 2 == 0 ? 2 : world;
            Subgroups subgroups = Distributed.newSubgroups(pg, groupSize).await(10, TimeUnit.SECONDS);
            assertEquals(world / groupSize, subgroups.all().size());
            ProcessGroup mine = subgroups.current().orElseThrow();
            int first = pg.rank() / groupSize * groupSize;
            double expected = 0;
            for (int r = first; r < first + groupSize; r++) {
                expected += r;
            }
            assertEquals(expected, sumInto(mine, pg.rank()), 0.0, "rank " + pg.rank());
            assertEquals(groupSize, mine.size());
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void newSubgroupsByEnumerationLeavesRanksInNoListWithoutACurrentSubgroup(int world) {
        Distributed.spawn(world, pg -> {
            // {0, last} together; with three ranks rank 1 is in no list.
            List<int[]> lists = List.of(new int[] {world - 1, 0});
            Subgroups subgroups = Distributed.newSubgroupsByEnumeration(pg, lists).await(10, TimeUnit.SECONDS);
            assertEquals(1, subgroups.all().size());
            if (pg.rank() == 0 || pg.rank() == world - 1) {
                assertEquals(world - 1, sumInto(subgroups.current().orElseThrow(), pg.rank()), 0.0);
            } else {
                assertTrue(subgroups.current().isEmpty());
                assertFalse(subgroups.all().getFirst().isMember());
            }
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void splitGroupNamesGroupRanksOfASubgroup(int world) {
        Distributed.spawn(world, pg -> {
            // The subgroup {0, 1}, split again by its own group ranks.
            ProcessGroup pair = Distributed.newGroup(pg, 1, 0).await(10, TimeUnit.SECONDS);
            if (!pair.isMember()) {
                return;
            }
            var mine = Distributed.splitGroup(pair, List.of(new int[] {0}, new int[] {1})).await(10, TimeUnit.SECONDS);
            ProcessGroup alone = mine.orElseThrow();
            assertEquals(1, alone.size());
            assertEquals(pg.rank(), alone.ranks()[0], "group rank r of the pair is global rank r here");
            assertEquals(pg.rank(), sumInto(alone, pg.rank()), 0.0);
        });
    }

    @Test
    void newGroupTakesItsOwnTimeoutAndBackend() {
        Distributed.spawn(2, pg -> {
            ProcessGroup g = Distributed.newGroup(pg, new int[] {0, 1}, Duration.ofSeconds(7), "tcp").await(10,
                    TimeUnit.SECONDS);
            assertEquals(Duration.ofSeconds(7), g.timeout());
            assertEquals("tcp", g.backendName());
            assertEquals(1.0, sumInto(g, pg.rank()), 0.0);
        });
    }

    @Test
    void badSizesListsTimeoutsAndBackendsAreRefused() {
        Distributed.spawn(3, pg -> {
            var e = assertThrows(IllegalArgumentException.class, () -> Distributed.newSubgroups(pg, 2));
            assertTrue(e.getMessage().contains("divide the group's size, 3"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> Distributed.newSubgroups(pg, 0));
            assertTrue(e.getMessage().contains("groupSize=0"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> Distributed.newSubgroupsByEnumeration(pg, List.of(new int[] {0, 1}, new int[] {1, 2})));
            assertTrue(e.getMessage().contains("rank 1 is in subgroup 0 and in subgroup 1"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> Distributed.newSubgroupsByEnumeration(pg, List.of(new int[] {0, 3})));
            assertTrue(e.getMessage().contains("rank 3 is not a member"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> Distributed.splitGroup(pg, List.of(new int[] {0, 5})));
            assertTrue(e.getMessage().contains("splitRanks rank"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> Distributed.newGroup(pg, new int[] {0, 1}, Duration.ZERO, null));
            assertTrue(e.getMessage().contains("must be positive"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> Distributed.newGroup(pg, new int[] {0, 1}, null, "no-such-backend"));
            assertTrue(e.getMessage().contains("no-such-backend"), e.getMessage());
            // The refused calls created nothing: the next subgroup still forms on every rank.
            assertEquals(3.0, sumInto(Distributed.newGroup(pg, 0, 1, 2).await(10, TimeUnit.SECONDS), pg.rank()), 0.0);
        });
    }
}
