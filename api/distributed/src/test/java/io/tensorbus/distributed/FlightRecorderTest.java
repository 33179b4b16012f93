package io.tensorbus.distributed;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The flight recorder: what it keeps, its dumps on failure, and fr-trace naming the rank that skipped a collective. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FlightRecorderTest {
    @TempDir
    Path dir;

    @Test
    void everyOperationIsRecordedWithItsSequenceSizesAndState() {
        Distributed.spawn(2, pg -> {
            Tensor t = Tensor.zeros(3, 2);
            pg.allReduce(t).await(10, TimeUnit.SECONDS);
            pg.broadcast(t, 0).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                pg.send(t, 1);
            } else {
                pg.recv(t, 0);
            }
            pg.barrier().await(10, TimeUnit.SECONDS);
            JsonObject dump = pg.flightRecorder().toJson();
            JsonArray entries = dump.getJsonArray("entries");
            assertEquals(3, pg.flightRecorder().collectiveCount());
            JsonObject first = entries.getJsonObject(0);
            assertEquals("allReduce", first.getString("op"));
            assertEquals(1L, first.getLong("seq"));
            assertEquals(new JsonArray().add(new JsonArray(List.of(3L, 2L))), first.getJsonArray("sizes"));
            assertEquals("completed", first.getString("state"));
            assertEquals("barrier", entries.getJsonObject(entries.size() - 1).getString("op"));
            assertEquals(3L, entries.getJsonObject(entries.size() - 1).getLong("seq"));
            assertEquals(pg.rank(), dump.getInteger("rank"));
        });
    }

    /**
     * Rank 2 skips the second all-reduce; the operations fail on every rank within the group's 3 s, each rank's
     * recorder writes its dump to the directory set by the property, and fr-trace names rank 2 and collective #2.
     */
    @Test
    void aRankThatSkipsACollectiveIsNamedByFrTrace() throws Exception {
        System.setProperty(FlightRecorder.DIR_PROPERTY, dir.toString());
        try {
            Distributed.spawn(3, Duration.ofSeconds(60), pg -> {
                ProcessGroup g = Distributed.newGroup(pg, new int[] {0, 1, 2}, Duration.ofSeconds(3), "tcp")
                        .await(10, TimeUnit.SECONDS);
                Tensor t = Tensor.ones(4);
                g.allReduce(t).await(10, TimeUnit.SECONDS);
                Exception e = assertThrows(Exception.class, () -> {
                    if (pg.rank() == 2) {
                        g.barrier().await(20, TimeUnit.SECONDS);
                    } else {
                        g.allReduce(t).await(20, TimeUnit.SECONDS);
                    }
                });
                // The exceptions number the collective as the dumps and fr-trace do.
                CommunicationException ce = communicationException(e);
                assertEquals(2, ce.sequence(), ce.getMessage());
                assertTrue(ce.getMessage().contains("#2"), ce.getMessage());
                Exception later = assertThrows(Exception.class, () -> g.allReduce(t).await(20, TimeUnit.SECONDS));
                assertTrue(later.getMessage().contains(") #3 in group '"), later.getMessage());
                assertTrue(!later.getMessage().contains("' in group '"), "no phrase twice: " + later.getMessage());
            });
        } finally {
            System.clearProperty(FlightRecorder.DIR_PROPERTY);
        }
        try (var files = Files.list(dir)) {
            assertEquals(3, files.filter(f -> f.getFileName().toString().startsWith("rank_")).count(),
                    "one dump per rank");
        }
        FlightRecorderTrace.Report report = FlightRecorderTrace.analyze(dir);
        String text = report.format();
        assertEquals(3, report.dumps(), text);
        assertTrue(text.contains("collective #2 differs: rank(s) [0, 1] issued allReduce(float32[4]), rank(s) [2]"
                + " issued barrier(): rank(s) [2] skipped or reordered allReduce(float32[4]) #2"), text);
    }

    private static CommunicationException communicationException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof CommunicationException ce) {
                return ce;
            }
        }
        throw new AssertionError("no CommunicationException in " + t, t);
    }

    @Test
    void aRankWithoutTheCollectiveAtAllIsNamedWithItsLastOne() throws Exception {
        Distributed.spawn(2, pg -> {
            Tensor t = Tensor.ones(2);
            pg.allReduce(t).await(10, TimeUnit.SECONDS);
            if (pg.rank() == 0) {
                // Rank 0 alone starts a second collective; rank 1 stops after the first.
                pg.allReduce(t);
            }
            pg.flightRecorder().dump(dir.resolve("rank_" + pg.rank() + ".json"));
        });
        String text = FlightRecorderTrace.analyze(dir).format();
        assertTrue(text.contains("collective #2 allReduce(float32[2]) was issued by rank(s) [0] and never by rank(s)"
                + " [1] (rank 1's last was #1 allReduce(float32[2]))"), text);
        assertTrue(text.contains("rank 0's allReduce(float32[2]) #2 scheduled"), text);
    }

    @Test
    void fileThatAreNotDumpsAreRefusedNamingThem() throws Exception {
        Files.writeString(dir.resolve("x.json"), "{\"a\": 1}");
        var e = assertThrows(IllegalArgumentException.class, () -> FlightRecorderTrace.analyze(dir));
        assertTrue(e.getMessage().contains("x.json is not a flight-recorder dump"), e.getMessage());
        assertEquals("fr-trace: 0 dump(s): every rank issued the same collectives",
                FlightRecorderTrace.analyze(Files.createDirectory(dir.resolve("empty"))).format());
    }

    @Test
    void theDebugLevelComesFromThePropertyOrTheEnvironment() {
        try {
            System.setProperty(DebugLevel.PROPERTY, "detail");
            assertEquals(DebugLevel.DETAIL, DebugLevel.current());
            assertTrue(DebugLevel.current().includes(DebugLevel.INFO));
            System.setProperty(DebugLevel.PROPERTY, "loud");
            var e = assertThrows(IllegalArgumentException.class, DebugLevel::current);
            assertTrue(e.getMessage().contains("use OFF, INFO or DETAIL"), e.getMessage());
            System.setProperty(DebugLevel.PROPERTY, "INFO");
            // A DETAIL-free INFO run still records and trains.
            Distributed.spawn(2, pg -> pg.allReduce(Tensor.ones(2)).await(10, TimeUnit.SECONDS));
        } finally {
            System.clearProperty(DebugLevel.PROPERTY);
        }
        assertEquals(System.getenv(DebugLevel.ENV) == null ? DebugLevel.OFF : DebugLevel.current(),
                DebugLevel.current());
    }
}
