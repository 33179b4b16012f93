package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The seed's end-to-end dist autograd example with two workers, in one JVM and as two JVMs. */
class DistAutogradSimpleTest {
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void bothWorkersStepTheTensorsTheyMadeOnTheOtherByTheLearningRate() throws Exception {
        Vertx vertx = Distributed.newVertx();
        HashStore store = new HashStore(Duration.ofSeconds(30));
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            started.add(Rpc.init("worker" + r, r, 2, RpcOptions.builder().registry(DistAutogradSimple.registry(r))
                    .store(store).vertx(vertx).build()));
        }
        List<RpcAgent> agents = new ArrayList<>();
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
        try {
            List<Future<DistAutogradSimple.Result>> results = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                RpcAgent agent = agents.get(r);
                String dst = "worker" + (r + 1) % 2;
                results.add(vertx.executeBlocking(() -> DistAutogradSimple.run(agent, dst,
                        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)), false));
            }
            for (Future<DistAutogradSimple.Result> f : results) {
                DistAutogradSimple.Result r = f.await(40, TimeUnit.SECONDS);
                for (int i = 0; i < 2; i++) {
                    Tensor before = r.before().get(i);
                    assertTrue(before.min().item() >= 0 && before.max().item() < 1, "uniform in [0, 1): " + before);
                    assertArrayEquals(before.sub(DistAutogradSimple.LR).toFloatArray(), r.after().get(i)
                            .toFloatArray(), 1e-6f, "the gradient of a sum is one");
                }
            }
            Future.all(agents.stream().map(a -> a.shutdown(true)).toList()).await(30, TimeUnit.SECONDS);
            for (RpcAgent a : agents) {
                assertEquals(List.of(), a.rrefLeaks(), "every RRef was released");
                assertEquals(0L, a.distAutograd().debugInfo().get("num_current_contexts"));
            }
        } finally {
            agents.forEach(a -> a.shutdown(false));
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theExampleRunsAsTwoProcessesThroughTheLauncher() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of("--nproc-per-node", "2", "--timeout", "100",
                DistAutogradSimple.class.getName()), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, "stdout:\n" + o + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < 2; r++) {
            assertTrue(Pattern.compile("(?m)^\\[rank " + r + "] worker" + r + ": two random 3x3 tensors on worker"
                    + (r + 1) % 2 + ", sums [\\d.]+ and [\\d.]+; after the distributed backward pass and one SGD"
                    + " step \\(lr 0.05\\) on their owner: [\\d.]+ and [\\d.]+$").matcher(o).find(), o);
        }
    }
}
