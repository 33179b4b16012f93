package io.tensorbus.distributed.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tensorbus.DType;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.autograd.Golden;
import io.tensorbus.distributed.metrics.TensorbusMetrics;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.io.SafeTensors;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.ReLU;
import io.tensorbus.nn.Reduction;
import io.tensorbus.nn.Sequential;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The RPC pipeline against the same model trained in one process. */
class PipelineTest {
    private static final int[] WIDTHS = {6, 12, 10, 8, 4};
    private static final double LR = 0.05;
    private RpcWorkers workers;

    /** Stage {@code k} of {@code of}: Linear(WIDTHS[k] -> ...) cut evenly, ReLU between all but the last layer. */
    static Module stage(int k, int of) {
        int layers = WIDTHS.length - 1;
        List<Module> parts = new ArrayList<>();
        for (int l = k * layers / of; l < (k + 1) * layers / of; l++) {
            parts.add(new Linear(WIDTHS[l], WIDTHS[l + 1], true, new Generator(100 + l)));
            if (l < layers - 1) {
                parts.add(new ReLU());
            }
        }
        return new Sequential(parts.toArray(Module[]::new));
    }

    @SuppressWarnings("unchecked")
    private static RpcRegistry registry() {
        return new RpcRegistry()
                .register("test.pipe.stage", a -> stage(((Number) a.get(0)).intValue(), ((Number) a.get(1)).intValue()))
                .register("test.pipe.resnet", a -> {
                    // The narrow ResNet-50 of tools/make_nn_data.py, loaded with the golden initial state.
                    ResNet model = new ResNet(ResNet.Block.BOTTLENECK, new int[] {3, 4, 6, 3}, 10, 8, null);
                    model.loadStateDict((Map<String, Tensor>) a.get(1), true);
                    return ((Number) a.get(0)).intValue() == 1 ? model.head(2) : model.tail(2);
                })
                .register("test.pipe.slow", a -> new BalanceTest.Slow(((Number) a.get(0)).longValue()))
                .register("test.pipe.state", a -> ((RRef<Module>) a.get(0)).localValue().stateDict());
    }

    private RpcWorkers start(int n) throws Exception {
        workers = new RpcWorkers().start(n, r -> RpcOptions.builder().registry(registry())
                .timeout(Duration.ofSeconds(20)));
        return workers;
    }

    @AfterEach
    void stop() throws Exception {
        if (workers != null) {
            workers.close();
        }
    }

    private static Pipeline pipeline(RpcAgent master, int stages, int micro, Pipeline.Schedule schedule) {
        List<RRef<Module>> refs = new ArrayList<>();
        for (int k = 0; k < stages; k++) {
            refs.add(master.remote("worker" + (k + 1), "test.pipe.stage", k, stages));
        }
        return Pipeline.of(master, refs, micro, schedule);
    }

    /** The parameters of the whole model after one SGD step on the whole batch, in one process. */
    private static List<Tensor> localStep(Tensor x, Tensor y) {
        Module model = stage(0, 1);
        SGD sgd = SGD.builder().lr(LR).build(model.parameters());
        Functional.mseLoss(model.forward(x), y, Reduction.MEAN).backward();
        sgd.step();
        return model.parameters();
    }

    /** One step through the pipeline: by hand with forward (GPipe), or with trainStep under {@code schedule}. */
    private static List<Tensor> pipelinedStep(RpcAgent master, int stages, int micro, Pipeline.Schedule schedule,
                                              boolean byHand, Tensor x, Tensor y) {
        DistAutograd dist = master.distAutograd();
        try (Pipeline pipe = pipeline(master, stages, micro, schedule)) {
            List<RRef<Tensor>> params = pipe.parameterRRefs();
            try (DistributedOptimizer opt = DistributedOptimizer.create(master, OptimizerSpec.sgd(LR), params)) {
                if (byHand) {
                    try (DistAutograd.Context context = dist.context()) {
                        Tensor out = pipe.forward(x);
                        assertEquals(x.size(0), out.size(0));
                        assertEquals(WIDTHS[WIDTHS.length - 1], out.size(1));
                        dist.backward(context.id(), List.of(Functional.mseLoss(out, y, Reduction.MEAN)));
                        opt.step(context.id());
                    }
                } else {
                    Tensor loss = pipe.trainStep(x, y, (o, t) -> Functional.mseLoss(o, t, Reduction.MEAN), opt);
                    Golden.close(localLoss(x, y), loss, schedule + " loss");
                }
            }
            List<Tensor> after = new ArrayList<>();
            for (RRef<Tensor> p : params) {
                after.add(p.toHere());
                p.close();
            }
            return after;
        }
    }

    private static Tensor localLoss(Tensor x, Tensor y) {
        return Functional.mseLoss(stage(0, 1).forward(x), y, Reduction.MEAN).detach();
    }

    @Test
    void oneStepUnderEitherScheduleWithAnyMicroBatchCountEqualsTheLocalStep() throws Exception {
        RpcAgent master = start(5).get(0);
        Generator g = new Generator(7);
        Tensor x = Tensor.randn(g, DType.FLOAT32, 12, WIDTHS[0]);
        Tensor y = Tensor.randn(g, DType.FLOAT32, 12, WIDTHS[WIDTHS.length - 1]);
        List<Tensor> expected = localStep(x, y);
        for (Pipeline.Schedule schedule : Pipeline.Schedule.values()) {
            for (int stages : new int[] {2, 3, 4}) {
                for (int micro : new int[] {1, 2, 4, 5}) {
                    for (boolean byHand : schedule == Pipeline.Schedule.GPIPE ? new boolean[] {true, false}
                            : new boolean[] {false}) {
                        List<Tensor> got = pipelinedStep(master, stages, micro, schedule, byHand, x, y);
                        assertEquals(expected.size(), got.size());
                        for (int i = 0; i < got.size(); i++) {
                            Golden.close(expected.get(i), got.get(i), schedule + ", " + stages + " stages, " + micro
                                    + " micro-batches" + (byHand ? " by hand" : "") + ", param " + i);
                        }
                    }
                }
            }
        }
        for (RpcAgent a : workers.all()) {
            RpcWorkers.eventually(() -> a.distAutograd().debugInfo().get("num_current_contexts") == 0,
                    a.self() + " has no context left");
        }
    }

    @Test
    void withBatchNormTheLossIsThatOfPyTorchsPipelinedTutorial() throws Exception {
        RpcAgent master = start(3).get(0);
        Map<String, Tensor> g;
        try (InputStream in = PipelineTest.class.getResourceAsStream("/pipeline/resnet50_w8_pipeline.safetensors")) {
            assertNotNull(in, "run /usr/bin/python3 tools/make_pipeline_data.py");
            g = SafeTensors.load(in.readAllBytes());
        }
        Map<String, Tensor> init = new TreeMap<>();
        g.forEach((k, v) -> {
            if (k.startsWith("init.")) {
                init.put(k.substring("init.".length()), v);
            }
        });
        for (int micro : new int[] {1, 2, 4}) {
            List<RRef<Module>> shards = List.of(master.remote("worker1", "test.pipe.resnet", 1, init),
                    master.remote("worker2", "test.pipe.resnet", 2, init));
            try (Pipeline pipe = Pipeline.of(master, shards, micro)) {
                Tensor loss = Functional.mseLoss(pipe.forward(g.get("x")), g.get("labels"), Reduction.MEAN);
                float expected = g.get("loss." + micro).toFloatArray()[0];
                assertEquals(expected, (float) loss.item(), 1e-4 * expected, micro + " micro-batches: loss");
                Map<String, Tensor> first = master.rpcSync("worker1", "test.pipe.state", shards.get(0));
                Golden.close(g.get("bn1_running_mean." + micro), first.get("1.running_mean"),
                        micro + " micro-batches: bn1's running mean, updated once per micro-batch");
            }
        }
    }

    @Test
    void eachStagesBusyTimeIsMeteredPerMicroBatch() throws Exception {
        RpcAgent master = start(3).get(0);
        Generator g = new Generator(9);
        Tensor x = Tensor.randn(g, DType.FLOAT32, 8, WIDTHS[0]);
        Tensor y = Tensor.randn(g, DType.FLOAT32, 8, WIDTHS[WIDTHS.length - 1]);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorbusMetrics metrics = new TensorbusMetrics()) {
            metrics.bindTo(registry);
            pipelinedStep(master, 2, 4, Pipeline.Schedule.GPIPE, false, x, y);
        }
        // Two stages, four micro-batches, one forward each.
        assertEquals(8, registry.find("tensorbus.pipeline.stage.busy").tags("pass", "forward", "outcome", "success")
                .timers().stream().mapToLong(Timer::count).sum());
    }

    /**
     * Two stages of 30 ms a micro-batch and four micro-batches: a pass takes about five turns, in which each stage
     * computes four, so each idles about a fifth of it (GPipe's (S-1)/(M+S-1)). The first pass sets the baseline.
     */
    @Test
    void eachStagesBubbleIsTheShareOfAForwardPassItDidNotCompute() throws Exception {
        RpcAgent master = start(3).get(0);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TensorbusMetrics metrics = new TensorbusMetrics()) {
            metrics.bindTo(registry);
            List<RRef<Module>> stages = List.of(master.remote("worker1", "test.pipe.slow", 30),
                    master.remote("worker2", "test.pipe.slow", 30));
            try (Pipeline pipe = Pipeline.of(master, stages, 4)) {
                Tensor x = Tensor.ones(8, 3);
                for (int pass = 0; pass < 3; pass++) {
                    assertEquals(8, pipe.forward(x).size(0));
                    Thread.sleep(100); // the stages' times after the pass come back
                }
            }
            for (int k = 0; k < 2; k++) {
                DistributionSummary bubble = registry.find("tensorbus.pipeline.bubble").tags("stage",
                        Integer.toString(k), "worker", "worker" + (k + 1)).summary();
                assertEquals(2, bubble.count(), "stage " + k + ": the second and third passes");
                assertTrue(bubble.mean() > 0.05 && bubble.mean() < 0.7, "stage " + k + " idled about a fifth of"
                        + " each pass: " + bubble.mean());
            }
        }
    }

    @Test
    void badArgumentsSayWhatIsAllowed() throws Exception {
        RpcAgent master = start(2).get(0);
        assertThrows(IllegalArgumentException.class, () -> Pipeline.of(master, List.of(), 2));
        RRef<Module> s = master.remote("worker1", "test.pipe.stage", 0, 1);
        IllegalArgumentException micro = assertThrows(IllegalArgumentException.class,
                () -> Pipeline.of(master, List.of(s), 0));
        assertTrue(micro.getMessage().contains("microBatches must be 1 or more"), micro.getMessage());
        try (Pipeline pipe = Pipeline.of(master, List.of(s), 3)) {
            assertEquals(Pipeline.Schedule.GPIPE, pipe.schedule());
            assertThrows(IllegalArgumentException.class, () -> pipe.forward(Tensor.scalar(1.0)));
            assertEquals(List.of(master.workerInfo("worker1")), pipe.workers());
            Tensor out = pipe.forward(Tensor.randn(new Generator(1), DType.FLOAT32, 2, WIDTHS[0]));
            assertEquals(2, out.size(0), "2 samples make 2 micro-batches, not 3");
        }
    }
}
