package io.tensorbus.workloads.pipeline;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * One process of the pipeline ResNet50 workload (the master or a shard worker) as a Vert.x verticle, for Vert.x's
 * launchers and {@code tensorbus launch}:
 *
 * <pre>{@code
 * tensorbus launch --nproc-per-node 3 io.vertx.launcher.application.VertxApplication \
 *     io.tensorbus.workloads.pipeline.PipelineResNet50Verticle -conf '{"microBatches": [1, 4], "batches": 2}'
 * }</pre>
 *
 * <p>The config is {@link PipelineConfig}. The process meets the others through its verticle's Vert.x and works
 * on a thread of its own; the master's result is the seconds per batch of each micro-batch count, a shard
 * worker's is empty.
 */
public final class PipelineResNet50Verticle extends WorkerVerticle<PipelineConfig, List<Double>> {
    /** The verticle as a launcher deploys it: it exits the process when its part is done. */
    public PipelineResNet50Verticle() {
        super(PipelineResNet50Command.NAME, Promise.promise(), true, System.out, Distributed.environment());
    }

    /**
     * A verticle that completes {@code done} and does not exit the process.
     *
     * @param out where the master prints its lines
     * @param env the environment whose {@code RANK}, {@code WORLD_SIZE}, ... fill in what the config leaves out
     */
    public PipelineResNet50Verticle(Promise<List<Double>> done, PrintStream out, Map<String, String> env) {
        super(PipelineResNet50Command.NAME, done, false, out, env);
    }

    @Override
    protected PipelineConfig readConfig(JsonObject json, Map<String, String> env) {
        return PipelineConfig.fromJson(json, env);
    }

    @Override
    protected String describe(PipelineConfig config) {
        return PipelineResNet50.NAMES.get(config.rank()) + " (rank " + config.rank() + " of " + config.worldSize()
                + ")";
    }

    @Override
    protected List<Double> work(PipelineConfig config) throws Exception {
        return PipelineResNet50.runProcess(config.rank(), config.worldSize(), config.options(),
                RpcOptions.builder().vertx(vertx).initMethod(config.initMethod()), out);
    }

    /** Nothing to cut short: every call of the work has the RPC timeout as its deadline. */
    @Override
    protected void abandon() {
    }
}
