package io.tensorbus.workloads.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.Device;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DdpConfigTest {
    private static final Map<String, String> LAUNCHED = Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR",
            "127.0.0.1", "MASTER_PORT", "29501", "TENSORBUS_STORE_HOSTED", "1", "LOCAL_WORLD_SIZE", "2");

    @Test
    void anEmptyConfigOutsideALaunchIsOneRankWithTheTutorialsSettings() {
        DdpConfig c = DdpConfig.fromJson(new JsonObject(), Map.of());
        assertEquals(0, c.rank());
        assertEquals(1, c.worldSize());
        assertEquals(-1, c.masterPort());
        assertEquals(FashionMnistTraining.Options.defaults(), c.training());
        assertEquals(128, c.perRankBatch());
        assertEquals(0, c.threads());
        assertEquals(Duration.ofMinutes(30), c.timeout());
        InitOptions o = c.initOptions(null);
        assertNotNull(o.store(), "a world of one meets nobody: an in-process store");
    }

    @Test
    void aDeviceChoosesItsBackendAndIndexAndBindsTheGroup() {
        DdpConfig cl = DdpConfig.fromJson(new JsonObject().put("device", "opencl"), LAUNCHED);
        assertEquals(Device.opencl(0), cl.training().device(), "ranks share the first OpenCL device");
        assertEquals("opencl", cl.backend());
        assertEquals("opencl:0", cl.initOptions(null).properties().get(InitOptions.DEVICE_ID));
        Map<String, String> env = new HashMap<>(LAUNCHED);
        env.put("LOCAL_RANK", "1");
        DdpConfig cuda = DdpConfig.fromJson(new JsonObject().put("device", "cuda"), env);
        assertEquals(Device.cuda(1), cuda.training().device(), "each rank its own GPU: cuda:LOCAL_RANK");
        assertEquals("nccl", cuda.backend());
        DdpConfig chosen = DdpConfig.fromJson(new JsonObject().put("device", "opencl:0").put("backend", "tcp"),
                LAUNCHED);
        assertEquals("tcp", chosen.backend(), "a backend given wins");
        assertEquals("tcp", DdpConfig.fromJson(new JsonObject(), LAUNCHED).backend());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DdpConfig.fromJson(new JsonObject().put("device", "opencl:x"), LAUNCHED));
        assertTrue(e.getMessage().contains("'device'") && e.getMessage().contains("opencl:x"), e.getMessage());
    }

    @Test
    void theLaunchersEnvironmentFillsInWhatTheConfigLeavesOut() {
        DdpConfig c = DdpConfig.fromJson(new JsonObject().put("epochs", 1), LAUNCHED);
        assertEquals(1, c.rank());
        assertEquals(2, c.worldSize());
        assertEquals("127.0.0.1", c.masterAddr());
        assertEquals(29501, c.masterPort());
        assertTrue(c.storeHosted());
        assertEquals(64, c.perRankBatch());
        assertEquals(Math.max(1, Runtime.getRuntime().availableProcessors() / 2), c.threads());
        InitOptions o = c.initOptions(null);
        assertEquals("tcp://127.0.0.1:29501", o.initMethod());
        assertEquals("1", o.environment().get("TENSORBUS_STORE_HOSTED"));
        assertEquals(1, o.rank());
        assertEquals(2, o.worldSize());
    }

    @Test
    void configFieldsWinOverTheEnvironmentAndAnOwnPortIsNotTheLaunchersStore() {
        DdpConfig c = DdpConfig.fromJson(new JsonObject().put("rank", 0).put("worldSize", 3).put("masterPort", 29600)
                .put("threads", 1), LAUNCHED);
        assertEquals(0, c.rank());
        assertEquals(3, c.worldSize());
        assertEquals(29600, c.masterPort());
        assertFalse(c.storeHosted());
        assertEquals(1, c.threads());
        assertNull(c.initOptions(null).environment().get("TENSORBUS_STORE_HOSTED"));
    }

    @Test
    void anInitMethodIsUsedAsGiven() {
        DdpConfig c = DdpConfig.fromJson(new JsonObject().put("initMethod", "file:///tmp/rdv").put("rank", 1)
                .put("worldSize", 2), Map.of());
        assertEquals("file:///tmp/rdv", c.initOptions(null).initMethod());
    }

    @Test
    void trainingFieldsRoundTripThroughTheJsonTheCommandLineWrites() {
        FashionMnistTraining.Options o = new FashionMnistTraining.Options(3, Path.of("/data/fm"), 7, 64, 0.05, 0.9,
                512);
        assertEquals(o, DdpConfig.fromJson(ConfigFields.trainingJson(o), Map.of()).training());
    }

    @Test
    void anUnknownFieldIsNamedWithTheAllowedOnes() {
        assertMessage(new JsonObject().put("epoch", 1), "unknown config field 'epoch'; allowed fields: rank,"
                + " worldSize, masterAddr, masterPort, initMethod, backend, timeoutSeconds, threads, epochs, dataDir,"
                + " batchSize, lr, momentum, seed, limit");
    }

    @Test
    void aValueOfTheWrongTypeOrRangeNamesTheFieldAndWhatItAllows() {
        assertMessage(new JsonObject().put("epochs", "five"), "config field 'epochs' must be a whole number >= 1,"
                + " got \"five\"");
        assertMessage(new JsonObject().put("epochs", 0), "config field 'epochs' must be a whole number >= 1, got 0");
        assertMessage(new JsonObject().put("epochs", 1.5), "config field 'epochs' must be a whole number >= 1,"
                + " got 1.5");
        assertMessage(new JsonObject().put("lr", -0.1), "config field 'lr' must be a number >= 0, got -0.1");
        assertMessage(new JsonObject().put("dataDir", 3), "config field 'dataDir' must be a non-empty string, got 3");
        assertMessage(new JsonObject().put("masterPort", 70000).put("worldSize", 2), "config field 'masterPort' must"
                + " be a whole number from 0 to 65535, got 70000");
        assertMessage(new JsonObject().put("worldSize", 2).put("rank", 2), "config field 'rank' must be a whole number"
                + " from 0 to 1, got 2");
        assertMessage(new JsonObject().put("worldSize", 4).put("batchSize", 2).put("masterPort", 1), "batchSize 2 is"
                + " smaller than worldSize 4");
    }

    @Test
    void aBadEnvironmentVariableIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DdpConfig.fromJson(new JsonObject(), Map.of("WORLD_SIZE", "two")));
        assertEquals("WORLD_SIZE='two' (environment) must be a whole number from 1 to 1048576", e.getMessage());
    }

    @Test
    void severalRanksNeedAPortOrAnInitMethodButNotBoth() {
        assertMessage(new JsonObject().put("worldSize", 2), "config field 'masterPort' (or MASTER_PORT, or"
                + " 'initMethod') is required for worldSize 2");
        assertMessage(new JsonObject().put("initMethod", "tcp://h:1").put("masterPort", 2), "config fields"
                + " 'initMethod' and 'masterAddr'/'masterPort' exclude each other");
    }

    private static void assertMessage(JsonObject config, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DdpConfig.fromJson(config, Map.of()));
        assertTrue(e.getMessage().startsWith(expected), "message: " + e.getMessage());
    }
}
