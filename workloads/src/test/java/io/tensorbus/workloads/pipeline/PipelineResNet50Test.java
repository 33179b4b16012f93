package io.tensorbus.workloads.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.nn.models.ResNet;
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

/** The seed's pipeline ResNet50 with a master and two shard workers in one JVM, at a small size. */
class PipelineResNet50Test {
    @Test
    void parsesTheOptionsAndSaysWhatIsAllowed() {
        PipelineOptions o = PipelineOptions.parse(List.of("--micro-batches", "1,4", "--batch", "8", "--img", "32",
                "--schedule", "1f1b"));
        assertEquals(List.of(1, 4), o.microBatches());
        assertEquals(8, o.batch());
        assertEquals(Pipeline.Schedule.ONE_F_ONE_B, o.schedule());
        assertEquals(PipelineOptions.defaults().batches(), o.batches());
        assertMessage("--micro-batches must list counts from 1 to the batch size 4", "--batch", "4",
                "--micro-batches", "8");
        assertMessage("--img must be 32 or more", "--img", "16");
        assertMessage("--schedule is gpipe or 1f1b, got 'zb'", "--schedule", "zb");
        assertMessage("Unknown options: '--nproc', '3'", "--nproc", "3");
        assertMessage("Missing required parameter for option '--batch' (B)", "--batch");
        assertMessage("Invalid value for option '--batches': 'x' is not an int", "--batches", "x");
        assertMessage("--batches must be at least 1, got 0", "--batches", "0");
        assertMessage("--balance must be time or seed, got 'size'", "--balance", "size");
        assertTrue(PipelineOptions.defaults().balanceByTime());
        assertEquals("seed", PipelineOptions.parse(List.of("--balance", "seed")).balanceName());
    }

    private static List<String> losses(String out) {
        List<String> lines = out.lines().filter(l -> l.contains("loss of the last batch")).toList();
        assertTrue(!lines.isEmpty() && lines.getLast().startsWith("micro-batches 2: "), out);
        return lines;
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PipelineOptions.parse(List.of(args)));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }

    @Test
    void theShardsAreTheTwoHalvesOfOneResNet50() {
        assertEquals(161, PipelineResNet50.shard(1, 10, 3).parameters().size()
                + PipelineResNet50.shard(2, 10, 3).parameters().size(), "ResNet50's 161 parameter tensors");
        assertThrows(IllegalArgumentException.class, () -> PipelineResNet50.shard(3, 10, 3));
        assertEquals(161, PipelineResNet50.layers(10, 3, 0, 9).parameters().size()
                + PipelineResNet50.layers(10, 3, 9, 23).parameters().size(), "any cut shares out every parameter");
        var e = assertThrows(IllegalArgumentException.class, () -> PipelineResNet50.layers(10, 3, 5, 24));
        assertEquals("layers 5 to 24 are not a part of the 23 layers of a ResNet50", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PipelineResNet50.layers(10, 3, 4, 4));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theMeasuredCutGivesEachShardSomeLayers() {
        int cut = PipelineResNet50.measuredCut(PipelineOptions.parse(List.of("--micro-batches", "2", "--batch", "4",
                "--img", "32")));
        // ResNet50's blocks at width 4 instead of 64: the same layers, built in a moment.
        ResNet narrow = new ResNet(ResNet.Block.BOTTLENECK, new int[] {3, 4, 6, 3}, 10, 4, null);
        assertEquals(PipelineResNet50.RESNET50_LAYERS, narrow.sequential().size(), "the layers of the sequential form");
        assertTrue(cut >= 1 && cut <= 22, "worker2 begins at layer " + cut);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theMasterTimesEveryMicroBatchCountThroughTheTwoShards() throws Exception {
        Vertx vertx = Distributed.newVertx();
        HashStore store = new HashStore(Duration.ofSeconds(30));
        List<Future<RpcAgent>> started = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            started.add(Rpc.init(PipelineResNet50.NAMES.get(r), r, 3, RpcOptions.builder()
                    .registry(PipelineResNet50.registry(() -> { })).store(store).vertx(vertx)
                    .timeout(Duration.ofSeconds(60)).build()));
        }
        List<RpcAgent> agents = new ArrayList<>();
        for (Future<RpcAgent> f : started) {
            agents.add(f.await(20, TimeUnit.SECONDS));
        }
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PipelineOptions options = PipelineOptions.parse(List.of("--micro-batches", "1,2", "--batch", "4",
                    "--img", "32", "--batches", "1", "--schedule", "1f1b", "--balance", "seed"));
            List<Double> seconds = PipelineResNet50.run(agents.get(0), options,
                    new PrintStream(out, true, StandardCharsets.UTF_8));
            assertEquals(2, seconds.size());
            assertTrue(seconds.stream().allMatch(s -> s > 0 && s < 60), seconds.toString());
            String o = out.toString(StandardCharsets.UTF_8);
            assertTrue(Pattern.compile("(?m)^pipeline 1f1b batch=4 img=32 micro_batches=2"
                    + " s_per_batch=\\d+\\.\\d{3}$").matcher(o).find(), o);
            assertTrue(o.contains("balance seed: worker1 holds the stem, layer1 and layer2, worker2 the rest"), o);

            // Another cut (as --balance time measures one; BalanceTest checks the measuring) computes the same
            // model: the same loss.
            ByteArrayOutputStream cutOut = new ByteArrayOutputStream();
            PipelineResNet50.run(agents.get(0), PipelineOptions.parse(List.of("--micro-batches", "2", "--batch",
                    "4", "--img", "32", "--batches", "1", "--schedule", "1f1b")),
                    new PrintStream(cutOut, true, StandardCharsets.UTF_8), 15);
            String c = cutOut.toString(StandardCharsets.UTF_8);
            assertTrue(c.contains("balance by time: worker1 holds layers 0 to 14 of 23, worker2 15 to 22"), c);
            assertEquals(losses(o).getLast(), losses(c).getLast());
            Future.all(agents.stream().map(a -> a.shutdown(true)).toList()).await(30, TimeUnit.SECONDS);
            for (RpcAgent a : agents) {
                assertEquals(List.of(), a.rrefLeaks(), "every RRef was released");
            }
        } finally {
            agents.forEach(a -> a.shutdown(false));
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
