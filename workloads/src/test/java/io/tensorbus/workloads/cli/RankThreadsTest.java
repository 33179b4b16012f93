package io.tensorbus.workloads.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RankThreadsTest {
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(Map<String, String> env, String... args) {
        return RankThreads.run(List.of(args), env, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void eachRankGetsItsOwnRankAndLocalRankAndTheNodesOtherVariables() {
        Map<String, String> node = Map.of("RANK", "4", "LOCAL_RANK", "0", "LOCAL_WORLD_SIZE", "2", "WORLD_SIZE", "6",
                "MASTER_PORT", "29500");
        assertEquals(Map.of("RANK", "5", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2", "WORLD_SIZE", "6",
                "MASTER_PORT", "29500"), RankThreads.rankEnvironment(node, 5, 1));
    }

    @Test
    void anEnvironmentThatDescribesNoNodeIsRefusedNamingTheVariable() {
        assertEquals(Cli.USAGE, run(Map.of("RANK", "0"), Main.class.getName(), "run", "ddp-fashion-mnist"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("LOCAL_WORLD_SIZE='null' must be a number of"
                + " ranks, 1 or more; run it through tensorbus launch --ranks-as-threads"), err.toString());
    }

    @Test
    void aMainClassThatIsNotThereIsNamedByTheRank() {
        // One rank: with two, the node's run ends at the first failure, before the other may have said anything.
        assertEquals(Cli.USAGE, run(Map.of("RANK", "1", "LOCAL_WORLD_SIZE", "1"), "com.example.Train"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("[rank 1] tensorbus: ranks as threads: no public"
                + " static void main(String[]) in 'com.example.Train'"), err.toString());
    }

    @Test
    void aMainThatThrowsFailsItsRankWithItsStackTrace() {
        assertEquals(1, run(Map.of("RANK", "0", "LOCAL_WORLD_SIZE", "1"), ThrowingMain.class.getName()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("[rank 0] Exception in thread \"tensorbus-rank-0\""
                + " java.lang.IllegalStateException: rank 0 of the thread's own environment"), err.toString());
    }

    /** A rank's main that fails naming the rank it read. */
    public static final class ThrowingMain {
        private ThrowingMain() {
        }

        /** Throws. */
        public static void main(String[] args) {
            throw new IllegalStateException("rank " + Distributed.environment().get("RANK")
                    + " of the thread's own environment");
        }
    }

    @Test
    void theVerticleConfigIsJsonTextOrAJsonFile(@TempDir Path dir) throws Exception {
        assertEquals(new JsonObject().put("epochs", 1), RankVerticle.config(List.of("-conf", "{\"epochs\": 1}")));
        Path file = Files.writeString(dir.resolve("c.json"), "{\"epochs\": 2}");
        assertEquals(new JsonObject().put("epochs", 2), RankVerticle.config(List.of("-conf", file.toString())));
        assertEquals(new JsonObject(), RankVerticle.config(List.of()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RankVerticle.config(List.of("-conf", dir.resolve("none.json").toString())));
        assertTrue(e.getMessage().contains("is neither a JSON object nor a readable JSON file"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RankVerticle.config(List.of("-instances", "2")));
        assertTrue(e.getMessage().startsWith("after the verticle only '-conf JSON' is taken"), e.getMessage());
    }
}
