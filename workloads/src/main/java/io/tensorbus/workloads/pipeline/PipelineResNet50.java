package io.tensorbus.workloads.pipeline;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.pipeline.Balance;
import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.Reduction;
import io.tensorbus.nn.Sequential;
import io.tensorbus.nn.models.ResNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.bench.Measurement;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The seed's pipeline-parallel ResNet50 (PyTorch's RPC tutorial), one process of it: rank 0 is the
 * {@code master}, ranks 1 and 2 hold {@code ResNetShard1} (stem, layer1, layer2) and {@code ResNetShard2}
 * (layer3, layer4, pooling, fc), made with {@code remote} and built from one seed, so that they are the halves
 * of one ResNet50. For each micro-batch count the master makes fresh shards, a {@link Pipeline} over them and a
 * {@link DistributedOptimizer} (SGD, lr 0.05) over their parameter RRefs, and trains on random images against
 * one-hot labels with an MSE loss, timing each batch; it prints the fastest, as the anchor does:
 * {@code pipeline gpipe batch=32 img=64 micro_batches=2 s_per_batch=1.234} (the lines of
 * {@code tensorbus bench pipeline}). Every process computes on
 * one thread ({@code torch.set_num_threads(1)} in the anchor). Run it with
 * {@code tensorbus run pipeline-resnet50} ({@link PipelineResNet50Command}) or
 * {@code tensorbus launch --nproc-per-node 3 io.tensorbus.workloads.pipeline.PipelineResNet50 [options]}.
 */
public final class PipelineResNet50 {
    /** The function the shard workers serve: {@code [part 1|2, numClasses, seed]} to that shard. */
    static final String SHARD = "pipeline_resnet50.shard";

    /**
     * The function the shard workers serve for a measured cut: {@code [numClasses, seed, from, to]} to layers
     * {@code from} (inclusive) to {@code to} of the model's {@link ResNet#sequential()} form.
     */
    static final String LAYERS = "pipeline_resnet50.layers";

    /** The layers of a ResNet50's {@link ResNet#sequential()} form: the stem's 4, 16 blocks, and 3 at the end. */
    static final int RESNET50_LAYERS = 23;

    /** How long the master times the layers for {@code --balance time}, after one untimed pass. */
    static final Duration BALANCE_TIMEOUT = Duration.ofSeconds(1);

    /** {@code []}: the master is done; the shard workers may shut down. */
    static final String DONE = "pipeline_resnet50.done";

    /** The names of the three processes, by rank. */
    static final List<String> NAMES = List.of("master", "worker1", "worker2");

    private static final double LR = 0.05;
    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    private PipelineResNet50() {
    }

    /** The functions every process serves (only the shard workers are called); {@code done} runs on {@value #DONE}. */
    static RpcRegistry registry(Runnable done) {
        return new RpcRegistry()
                .register(SHARD, a -> shard(((Number) a.get(0)).intValue(), ((Number) a.get(1)).intValue(),
                        ((Number) a.get(2)).longValue()))
                .register(LAYERS, a -> layers(((Number) a.get(0)).intValue(), ((Number) a.get(1)).longValue(),
                        ((Number) a.get(2)).intValue(), ((Number) a.get(3)).intValue()))
                .register(DONE, a -> {
                    done.run();
                    return null;
                });
    }

    /** Shard {@code part} of a ResNet50 made from {@code seed}: the seed's ResNetShard1 or ResNetShard2. */
    static Module shard(int part, int numClasses, long seed) {
        if (part != 1 && part != 2) {
            throw new IllegalArgumentException("a ResNet50 is cut into shards 1 and 2, got " + part);
        }
        ResNet model = ResNet.resnet50(numClasses, new Generator(seed));
        return part == 1 ? model.head(2) : model.tail(2);
    }

    /**
     * Layers {@code from} to {@code to} (exclusive) of the {@link ResNet#sequential()} form of a ResNet50 made from
     * {@code seed}.
     *
     * @throws IllegalArgumentException unless {@code 0 <= from < to <=} the number of layers
     */
    static Module layers(int numClasses, long seed, int from, int to) {
        if (from < 0 || from >= to || to > RESNET50_LAYERS) {
            throw new IllegalArgumentException("layers " + from + " to " + to + " are not a part of the "
                    + RESNET50_LAYERS + " layers of a ResNet50");
        }
        return ResNet.resnet50(numClasses, new Generator(seed)).sequential().slice(from, to);
    }

    /**
     * The first layer of worker2's shard, measured with {@link Balance#byTime} on one micro-batch of the first count:
     * layers 0 to it (exclusive) go to worker1, the rest to worker2.
     */
    static int measuredCut(PipelineOptions options) {
        Sequential all = ResNet.resnet50(options.numClasses(), new Generator(options.seed())).sequential();
        int micro = options.microBatches().getFirst();
        int size = (options.batch() + micro - 1) / micro;
        Tensor sample = Tensor.randn(new Generator(options.seed()), DType.FLOAT32, size, 3, options.img(),
                options.img());
        return Balance.byTime(2, all, sample, BALANCE_TIMEOUT)[0];
    }

    /** One process of the job (RANK and WORLD_SIZE as {@code tensorbus launch} sets them); options follow. */
    public static void main(String[] args) throws Exception {
        PipelineOptions options = PipelineOptions.parse(List.of(args));
        Map<String, String> env = Distributed.environment();
        runProcess(Integer.parseInt(env.get("RANK")), Integer.parseInt(env.get("WORLD_SIZE")), options,
                RpcOptions.builder(), System.out);
    }

    /**
     * Runs process {@code rank}: meets the others with {@code rpc} (its init method or store, its Vert.x), then
     * the master times every micro-batch count and tells the shard workers it is done, and they all shut down.
     *
     * @return the master's seconds per batch of each count; empty on a shard worker
     * @throws IllegalArgumentException unless {@code worldSize} is 3
     */
    public static List<Double> runProcess(int rank, int worldSize, PipelineOptions options, RpcOptions.Builder rpc,
                                          PrintStream out) throws Exception {
        if (worldSize != NAMES.size()) {
            throw new IllegalArgumentException(PipelineResNet50Command.NAME + " runs as " + NAMES.size()
                    + " processes (a master and two shards), got a world of " + worldSize);
        }
        Threads.set(1);
        CountDownLatch done = new CountDownLatch(1);
        RpcAgent agent = Rpc.init(NAMES.get(rank), rank, worldSize, rpc.registry(registry(done::countDown))
                .timeout(TIMEOUT).initTimeout(Duration.ofMinutes(2)).build()).await(2, TimeUnit.MINUTES);
        try {
            if (rank != 0) {
                if (!done.await(runDeadline(options).toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException(NAMES.get(rank) + ": the master did not finish within "
                            + runDeadline(options).toMinutes() + " minutes");
                }
                return List.of();
            }
            List<Double> seconds = run(agent, options, out);
            for (int r = 1; r < worldSize; r++) {
                agent.rpcSync(r, DONE);
            }
            return seconds;
        } finally {
            agent.shutdown();
        }
    }

    /** The longest the master may take: every step and every set-up within the RPC timeout. */
    static Duration runDeadline(PipelineOptions options) {
        return TIMEOUT.multipliedBy((long) options.microBatches().size() * (options.batches() + 2));
    }

    /**
     * The master's part: every micro-batch count in turn; prints a line per count.
     *
     * @return the seconds per batch of each count, in the order of {@code options.microBatches()}
     */
    public static List<Double> run(RpcAgent agent, PipelineOptions options, PrintStream out) {
        out.printf(Locale.ROOT, "tensorbus pipeline: ResNet50 in two shards on %s and %s, batch %d of %dx%d images,"
                + " %d batch(es) per micro-batch count, schedule %s, SGD lr %s%n", NAMES.get(1), NAMES.get(2),
                options.batch(), options.img(), options.img(), options.batches(), options.scheduleName(), LR);
        return run(agent, options, out, options.balanceByTime() ? measuredCut(options) : null);
    }

    /**
     * {@link #run(RpcAgent, PipelineOptions, PrintStream)} with worker2's shard beginning at layer {@code cut} of
     * the model's sequential form (worker1 holding the layers before it), or the seed's cut when null.
     */
    static List<Double> run(RpcAgent agent, PipelineOptions options, PrintStream out, Integer cut) {
        out.println(cut == null ? "balance seed: worker1 holds the stem, layer1 and layer2, worker2 the rest"
                : "balance by time: worker1 holds layers 0 to " + (cut - 1) + " of " + RESNET50_LAYERS + ", worker2 "
                        + cut + " to " + (RESNET50_LAYERS - 1));
        out.flush();
        List<Double> seconds = new ArrayList<>();
        for (int micro : options.microBatches()) {
            double[] step = secondsPerBatch(agent, options, micro, cut);
            seconds.add(step[0]);
            out.println(new Measurement("pipeline", options.scheduleName()).with("batch", options.batch())
                    .with("img", options.img()).with("micro_batches", micro).with("s_per_batch", step[0], 3).line());
            // The same seed gives the same loss wherever the stages run: a check that the pipeline computes right.
            out.printf(Locale.ROOT, "micro-batches %d: loss of the last batch %.6f%n", micro, step[1]);
            out.flush();
        }
        return seconds;
    }

    /**
     * Fresh shards (the seed's, or the layers of {@code cut}), {@code options.batches()} timed steps: the fastest
     * step's seconds, as the anchor reports, and the last step's loss.
     */
    private static double[] secondsPerBatch(RpcAgent agent, PipelineOptions options, int micro, Integer cut) {
        List<RRef<Module>> shards = cut == null ? List.of(
                agent.remote(NAMES.get(1), SHARD, 1, options.numClasses(), options.seed()),
                agent.remote(NAMES.get(2), SHARD, 2, options.numClasses(), options.seed()))
                : List.of(agent.remote(NAMES.get(1), LAYERS, options.numClasses(), options.seed(), 0, cut),
                        agent.remote(NAMES.get(2), LAYERS, options.numClasses(), options.seed(), cut,
                                RESNET50_LAYERS));
        try (Pipeline pipe = Pipeline.of(agent, shards, micro, options.schedule())) {
            List<RRef<Tensor>> params = pipe.parameterRRefs();
            try (DistributedOptimizer opt = DistributedOptimizer.create(agent, OptimizerSpec.sgd(LR), params)) {
                Generator g = new Generator(options.seed());
                Tensor labels = Tensor.oneHot(Tensor.randint(g, 0, options.numClasses(), options.batch()),
                        options.numClasses()).to(DType.FLOAT32);
                double best = Double.POSITIVE_INFINITY;
                double loss = Double.NaN;
                for (int i = 0; i < options.batches(); i++) {
                    Tensor inputs = Tensor.randn(g, DType.FLOAT32, options.batch(), 3, options.img(), options.img());
                    long start = System.nanoTime();
                    loss = pipe.trainStep(inputs, labels, (o, t) -> Functional.mseLoss(o, t, Reduction.MEAN), opt)
                            .item();
                    best = Math.min(best, (System.nanoTime() - start) / 1e9);
                }
                return new double[] {best, loss};
            } finally {
                params.forEach(RRef::close);
            }
        }
    }
}
