package io.tensorbus.mutiny;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Uni;
import io.tensorbus.nn.Linear;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UniCheckpointTest {
    private static final Duration LONG = Duration.ofSeconds(20);
    @TempDir
    Path tmp;

    @Test
    void aSavedCheckpointLoadsBackThroughTheFaces() {
        Linear saved = new Linear(3, 2, true, new Generator(1));
        Uni<Void> save = UniCheckpoint.save(tmp, saved, SGD.builder().lr(0.1).build(saved.parameters()),
                Map.of("epoch", 4), null);
        assertFalse(Files.exists(tmp.resolve("checkpoint.json")), "building the Uni wrote the checkpoint");
        save.await().atMost(LONG);
        Linear loaded = new Linear(3, 2, true, new Generator(2));
        Map<String, Object> extra = UniCheckpoint.load(tmp, loaded, null, null).await().atMost(LONG);
        assertEquals(4L, extra.get("epoch"));
        assertArrayEquals(saved.weight().toFloatArray(), loaded.weight().toFloatArray());
    }

    @Test
    void aMissingCheckpointFailsTheLoad() {
        Throwable failure = UniCheckpoint.load(tmp.resolve("none"), new Linear(3, 2), null, null).onItem()
                .<Throwable>transform(v -> null).onFailure().recoverWithItem(e -> e).await().atMost(LONG);
        assertNotNull(failure, "loading nothing succeeded");
        assertTrue(String.valueOf(failure.getMessage()).contains("none"), String.valueOf(failure));
        Throwable refused = UniCheckpoint.save(null, new Linear(3, 2), null, Map.of(), null).onItem()
                .<Throwable>transform(v -> null).onFailure().recoverWithItem(e -> e).await().atMost(LONG);
        assertTrue(refused instanceof IllegalArgumentException || refused instanceof NullPointerException,
                String.valueOf(refused));
    }
}
