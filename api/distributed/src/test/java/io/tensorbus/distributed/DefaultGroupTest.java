package io.tensorbus.distributed;

import io.tensorbus.internal.distributed.RankThreadsForTest;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** {@code is_initialized}, the default group, and {@code get_node_local_rank}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DefaultGroupTest {

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void eachSpawnedRankHasItsOwnGroupAsDefault(int world) {
        Set<ProcessGroup> ranks = ConcurrentHashMap.newKeySet();
        Set<ProcessGroup> seenElsewhere = ConcurrentHashMap.newKeySet();
        Distributed.spawn(world, pg -> {
            assertTrue(Distributed.isInitialized());
            assertSame(pg, Distributed.defaultGroup(), "rank " + pg.rank());
            ranks.add(pg);
            // Another thread of the "process" sees the process's default, which no rank's group becomes.
            Thread other = new Thread(() -> {
                if (Distributed.isInitialized()) {
                    seenElsewhere.add(Distributed.defaultGroup());
                }
            });
            other.start();
            other.join();
        });
        assertEquals(world, ranks.size(), "one default per rank");
        seenElsewhere.retainAll(ranks);
        assertEquals(Set.of(), seenElsewhere, "a rank's group became another thread's default");
    }

    @Test
    void eachRankThreadHasTheFirstGroupItMadeAsDefaultAsAProcessWould() throws Exception {
        // As tensorbus launch --ranks-as-threads runs them: rank threads with environments of their own, each
        // calling initProcessGroup itself (not through spawn, which sets the thread's group).
        HashStore store = new HashStore(Duration.ofSeconds(20));
        Map<Integer, ProcessGroup> made = new ConcurrentHashMap<>();
        Map<Integer, ProcessGroup> seen = new ConcurrentHashMap<>();
        Map<Integer, Throwable> failed = RankThreadsForTest.run(2, rank -> {
            InitOptions options = InitOptions.builder().rank(rank).worldSize(2).store(store)
                    .timeout(Duration.ofSeconds(20)).build();
            ProcessGroup pg = Distributed.initProcessGroup(options).await(20, TimeUnit.SECONDS);
            made.put(rank, pg);
            Thread child = new Thread(() -> seen.put(rank, Distributed.defaultGroup()));
            child.start();
            child.join();
        });
        try {
            assertEquals(Map.of(), failed);
            for (int r = 0; r < 2; r++) {
                assertSame(made.get(r), seen.get(r), "rank " + r + "'s default");
            }
            if (Distributed.isInitialized()) {
                assertFalse(made.containsValue(Distributed.defaultGroup()), "a rank's group became the process's");
            }
        } finally {
            for (ProcessGroup pg : made.values()) {
                pg.close();
            }
        }
        for (ProcessGroup pg : made.values()) {
            assertFalse(Distributed.isInitialized() && Distributed.defaultGroup() == pg);
        }
    }

    @Test
    void initProcessGroupSetsTheProcessDefaultUntilDestroyed() throws Exception {
        assumeFalse(Distributed.isInitialized(), "another test left a process default group open");
        assertThrows(IllegalStateException.class, Distributed::defaultGroup);
        InitOptions options = InitOptions.builder().rank(0).worldSize(1).store(new HashStore(Duration.ofSeconds(20)))
                .timeout(Duration.ofSeconds(20)).build();
        ProcessGroup pg = Distributed.initProcessGroup(options).await(20, TimeUnit.SECONDS);
        try {
            assertTrue(Distributed.isInitialized());
            assertSame(pg, Distributed.defaultGroup());
        } finally {
            pg.close();
        }
        assertFalse(Distributed.isInitialized());
        var e = assertThrows(IllegalStateException.class, Distributed::defaultGroup);
        assertTrue(e.getMessage().contains("initProcessGroup"), e.getMessage());
    }

    @Test
    void theNodeLocalRankComesFromLocalRank() {
        assertEquals(3, Distributed.nodeLocalRank("3"));
        assertEquals(-1, Distributed.nodeLocalRank(null));
        assertEquals(-1, Distributed.nodeLocalRank(" "));
        var e = assertThrows(IllegalArgumentException.class, () -> Distributed.nodeLocalRank("-1"));
        assertTrue(e.getMessage().contains("LOCAL_RANK='-1'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Distributed.nodeLocalRank("one"));
        String env = System.getenv("LOCAL_RANK");
        assertEquals(env == null ? 7 : Integer.parseInt(env), Distributed.getNodeLocalRank(7));
        if (env == null) {
            var unset = assertThrows(IllegalStateException.class, Distributed::getNodeLocalRank);
            assertTrue(unset.getMessage().contains("LOCAL_RANK is not set"), unset.getMessage());
        }
    }

    @Test
    void eachSpawnedRankAndTheThreadsItStartsReadTheirOwnRankFromTheEnvironment() {
        Map<Integer, String> seen = new ConcurrentHashMap<>();
        Distributed.spawn(3, pg -> {
            assertEquals(pg.rank(), Distributed.getNodeLocalRank());
            Thread child = new Thread(() -> seen.put(pg.rank(), Distributed.environment().get("RANK") + "/"
                    + Distributed.environment().get("WORLD_SIZE")));
            child.start();
            child.join();
        });
        assertEquals(Map.of(0, "0/3", 1, "1/3", 2, "2/3"), seen);
        assertEquals(System.getenv(), Distributed.environment(), "outside a rank, the process's environment");
    }
}
