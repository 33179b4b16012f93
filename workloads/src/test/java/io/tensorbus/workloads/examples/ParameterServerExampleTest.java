package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.cli.Launcher;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The parameter-server example with three workers, in one JVM and as three JVMs through the launcher. */
class ParameterServerExampleTest {
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void threeWorkersShareARemoteValueAndTrainTheParameterServerToItsTarget() throws Exception {
        Vertx vertx = Distributed.newVertx();
        HashStore store = new HashStore(Duration.ofSeconds(30));
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            started.add(Rpc.init("worker" + r, r, 3, RpcOptions.builder().registry(ParameterServerExample.registry())
                    .store(store).vertx(vertx).build()));
        }
        List<RpcAgent> agents = new ArrayList<>();
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ParameterServerExample.Result r = ParameterServerExample.run(agents.get(0),
                    new PrintStream(out, true, StandardCharsets.UTF_8));
            assertEquals(r.sumOnWorker0(), r.sumOnWorker2(), "both fetched the same value");
            assertTrue(r.sumOnWorker0() > 0 && r.sumOnWorker0() < 9, "a 3x3 tensor of uniform numbers");
            assertEquals(2L * ParameterServerExample.STEPS, r.steps());
            Tensor error = r.parameters().sub(Tensor.of(new float[] {1, 2, 3, 4}, 4)).abs().max();
            assertTrue(error.item() < 0.05, "parameters " + r.parameters());
            List<Future<Void>> down = agents.stream().map(a -> a.shutdown(true)).toList();
            Future.all(down).await(30, TimeUnit.SECONDS);
            for (RpcAgent a : agents) {
                assertEquals(List.of(), a.rrefLeaks(), "every RRef was released");
            }
        } finally {
            agents.forEach(a -> a.shutdown(false));
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void theExampleRunsAsThreeProcessesThroughTheLauncher() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc-per-node", "3", "--timeout", "150",
                ParameterServerExample.class.getName()), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, "stdout:\n" + o + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        assertTrue(o.contains("[rank 0] worker0 made a 3x3 tensor on worker1 with remote; worker2 fetched it"), o);
        assertTrue(o.contains("2 trainers took 50 steps on the parameter server on worker1"), o);
    }
}
