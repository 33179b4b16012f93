package io.tensorbus.workloads.bench;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.optim.ZeroRedundancyOptimizer;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.cli.Cli;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code zero} suite: how much Adam state a ZeroRedundancyOptimizer keeps per rank on ResNet-50 against a plain
 * Adam over the whole model (the "about 1/world"), and how long its step (local Adam plus the broadcast of
 * every rank's parameters) takes. The ranks are threads of this JVM, so the step time is a lower bound of what
 * processes on more cores would see.
 */
public final class ZeroBench {
    private final int world;

    /** A run over {@code world} ranks. */
    public ZeroBench(int world) {
        this.world = world;
    }

    /** Measures the plain optimizer, then every rank's ZeRO shard; returns 0. */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        List<Tensor> whole = model();
        Optimizer plain = Adam.builder().lr(1e-3).build(whole);
        setGradients(whole);
        long start = System.nanoTime();
        plain.step();
        double plainMs = (System.nanoTime() - start) / 1e6;
        long plainBytes = stateBytes(plain, whole);
        Map<Integer, long[]> perRank = new ConcurrentHashMap<>();
        Map<Integer, Double> stepMs = new ConcurrentHashMap<>();
        Distributed.spawn(world, Duration.ofMinutes(5), pg -> {
            List<Tensor> params = model();
            ZeroRedundancyOptimizer zero = ZeroRedundancyOptimizer.builder(OptimizerSpec.adam(1e-3)).group(pg)
                    .parametersAsBucketView(true).build(params);
            setGradients(params);
            zero.step();
            setGradients(params);
            long t0 = System.nanoTime();
            zero.step();
            stepMs.put(pg.rank(), (System.nanoTime() - t0) / 1e6);
            perRank.put(pg.rank(), new long[] {stateBytes(zero.optim(), params), zero.parametersOf(pg.rank()).size()});
        });
        for (int r = 0; r < world; r++) {
            long bytes = perRank.get(r)[0];
            sink.accept(new Measurement("zero", "adam_state").with("model", "resnet50").with("world", world)
                    .with("rank", r).with("parameters", perRank.get(r)[1]).with("state_mib", bytes / 1048576.0, 1)
                    .with("plain_state_mib", plainBytes / 1048576.0, 1)
                    .with("fraction", (double) bytes / plainBytes, 3).with("one_over_world", 1.0 / world, 3)
                    .with("step_ms", stepMs.get(r), 1).with("plain_step_ms", plainMs, 1));
        }
        return 0;
    }

    private static List<Tensor> model() {
        return ResNet.resnet50(1000, new Generator(0)).parameters();
    }

    private static void setGradients(List<Tensor> params) {
        Generator g = new Generator(1);
        for (Tensor p : params) {
            p.setGrad(Tensor.randn(g, DType.FLOAT32, p.shape()).mul(1e-3));
        }
    }

    private static long stateBytes(Optimizer optimizer, List<Tensor> params) {
        long bytes = 0;
        for (Tensor p : params) {
            for (Tensor t : optimizer.state(p).values()) {
                bytes += (long) t.numel() * t.dtype().byteSize();
            }
        }
        return bytes;
    }

    /** {@code tensorbus bench zero}: its option, and the run. */
    @Command(name = "zero", description = "ZeroRedundancyOptimizer's Adam state per rank on ResNet-50, ranks as"
            + " threads")
    public static final class Suite extends BenchSuite {
        @Option(names = "--world", paramLabel = "N", description = "ranks, 2 to 8 (default: ${DEFAULT-VALUE})")
        int world = 2;

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            ZeroBench bench = new ZeroBench(Cli.range("--world", world, 2, 8));
            return () -> bench.run(sink, err);
        }
    }
}
