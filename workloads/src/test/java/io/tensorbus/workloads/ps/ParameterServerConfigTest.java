package io.tensorbus.workloads.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ParameterServerConfigTest {
    private static final Map<String, String> LAUNCHED = Map.of("RANK", "2", "WORLD_SIZE", "3", "MASTER_PORT", "29500",
            "LOCAL_WORLD_SIZE", "3");

    @Test
    void aLaunchedJobGivesRankWorldAndTheClusterFromMasterPort() {
        ParameterServerConfig c = ParameterServerConfig.fromJson(new JsonObject(), LAUNCHED);
        assertEquals(2, c.rank());
        assertEquals(3, c.worldSize());
        assertEquals(2, c.trainers());
        assertEquals("tensorbus-ps-29500", c.cluster());
        assertEquals(29501, c.clusterPort());
        assertEquals("127.0.0.1", c.clusterHost());
        assertEquals("127.0.0.1", c.clusterSeed());
        assertEquals(Duration.ofSeconds(ParameterServerConfig.DEFAULT_TIMEOUT_SECONDS), c.timeout());
        assertEquals(FashionMnistTraining.Options.defaults(), c.training());
        assertEquals(64, c.perTrainerBatch(), "the global batch of 128 over 2 trainers");
        assertEquals(false, c.isServer());
    }

    @Test
    void acrossHostsTheMemberTakesThisHostsAddressAndJoinsThroughTheMasters() {
        Map<String, String> env = new HashMap<>(LAUNCHED);
        env.put("MASTER_ADDR", "10.1.1.1");
        env.put("TENSORBUS_LOCAL_ADDR", "10.9.9.9");
        ParameterServerConfig c = ParameterServerConfig.fromJson(new JsonObject(), env);
        assertEquals("10.9.9.9", c.clusterHost());
        assertEquals("10.1.1.1", c.clusterSeed());
        env.put("TENSORBUS_LOCAL_ADDR", "127.0.0.1");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ParameterServerConfig.fromJson(new JsonObject(), env));
        assertTrue(e.getMessage().startsWith("trainer2 would tell its peers to connect to 127.0.0.1"), e.getMessage());
    }

    @Test
    void theConfigOverridesTheEnvironment() {
        ParameterServerConfig c = ParameterServerConfig.fromJson(new JsonObject().put("rank", 0).put("worldSize", 5)
                .put("cluster", "job").put("clusterPort", 31000).put("epochs", 2).put("batchSize", 100)
                .put("timeoutSeconds", 9), LAUNCHED);
        assertTrue(c.isServer());
        assertEquals(4, c.trainers());
        assertEquals("job", c.cluster());
        assertEquals(31000, c.clusterPort());
        assertEquals(2, c.training().epochs());
        assertEquals(25, c.perTrainerBatch());
        assertEquals(Duration.ofSeconds(9), c.timeout());
    }

    @Test
    void badConfigsNameTheFieldAndWhatIsAllowed() {
        assertMessage("unknown config field 'nproc'; allowed fields: rank, worldSize, cluster",
                new JsonObject().put("nproc", 2), LAUNCHED);
        assertMessage("config field 'worldSize' must be a whole number from 2 to 65536, got 1",
                new JsonObject().put("worldSize", 1), LAUNCHED);
        assertMessage("config fields 'cluster' and 'clusterPort' are required outside a job of tensorbus launch",
                new JsonObject(), Map.of("RANK", "0", "WORLD_SIZE", "2"));
        assertMessage("config field 'clusterPort' must be a whole number from 1 to 65526, got 65530",
                new JsonObject().put("clusterPort", 65530), LAUNCHED);
        assertMessage("batchSize 1 is smaller than the 2 trainers",
                new JsonObject().put("batchSize", 1).put("worldSize", 3), LAUNCHED);
        assertMessage("MASTER_PORT='x' (environment) must be a whole number",
                new JsonObject(), Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_PORT", "x"));
    }

    private static void assertMessage(String expected, JsonObject config, Map<String, String> env) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ParameterServerConfig.fromJson(config, env));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
