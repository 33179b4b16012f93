package io.tensorbus.workloads.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ParameterServerCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(Map<String, String> env, String... args) {
        return ParameterServerCommand.run(List.of(args), env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void parsesTheTrainersAndTheTrainingOptions() {
        ParameterServerCommand.Args a = ParameterServerCommand.Args.parse(List.of("--trainers", "3", "--epochs", "2"));
        assertEquals(3, a.trainers());
        assertEquals(2, a.training().epochs());
        assertEquals(FashionMnistTraining.Options.defaults().batchSize(), a.training().batchSize());
        assertEquals(0, ParameterServerCommand.Args.parse(List.of()).trainers(), "not given");
    }

    @Test
    void badArgumentsSayWhatIsAllowed() {
        assertMessage("--trainers must be from 1 to 1023, got 0", "--trainers", "0");
        assertMessage("Missing required parameter for option '--trainers' (N)", "--trainers");
        assertMessage("--epochs must be at least 1, got 0", "--epochs", "0");
        assertMessage("Unknown options: '--nproc', '2'", "--nproc", "2");
        assertMessage("--data /no/such/dir is not a directory", "--data", "/no/such/dir");
    }

    @Test
    void insideALaunchedJobTrainersThatDisagreeWithTheWorldSizeAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run(Map.of("RANK", "0", "WORLD_SIZE", "3", "MASTER_PORT", "29500"), "--trainers", "3"));
        assertTrue(e.getMessage().startsWith("--trainers 3 disagrees with WORLD_SIZE=3"), e.getMessage());
    }

    @Test
    void theServerAndEachTrainerRunTheVerticleUnderVertxApplication() {
        JsonObject config = new JsonObject().put("epochs", 1);
        assertEquals(List.of("--nproc-per-node", "3", "io.vertx.launcher.application.VertxApplication",
                        "io.tensorbus.workloads.ps.ParameterServerVerticle", "-conf", "{\"epochs\":1}"),
                ParameterServerCommand.launchArgs(3, false, config));
        assertEquals(List.of("--ranks-as-threads", "--nproc-per-node", "3",
                        "io.vertx.launcher.application.VertxApplication",
                        "io.tensorbus.workloads.ps.ParameterServerVerticle", "-conf", "{\"epochs\":1}"),
                ParameterServerCommand.launchArgs(3, true, config));
        assertTrue(ParameterServerCommand.Args.parse(List.of("--ranks-as-threads")).ranksAsThreads());
    }

    @Test
    void insideALaunchedJobRanksAsThreadsAreRefusedNamingLaunch() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run(Map.of("RANK", "0", "WORLD_SIZE", "3", "MASTER_PORT", "29500"), "--ranks-as-threads"));
        assertTrue(e.getMessage().startsWith("--ranks-as-threads is for a job this command starts"), e.getMessage());
    }

    @Test
    void theClusterPortsFoundAreFree() throws IOException {
        int first = ParameterServerCommand.freePortRange(HazelcastCluster.PORT_COUNT);
        assertTrue(first >= 20_000 && first + HazelcastCluster.PORT_COUNT <= 60_000, "first port " + first);
        for (int p = first; p < first + HazelcastCluster.PORT_COUNT; p++) {
            new ServerSocket(p, 1, InetAddress.getLoopbackAddress()).close();
        }
    }

    private void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(Map.of(), args));
        assertTrue(e.getMessage().startsWith(expected), "message: " + e.getMessage());
    }
}
