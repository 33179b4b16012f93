package io.tensorbus.workloads.ddp;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.Map;

/**
 * One rank of the DDP Fashion-MNIST workload as a Vert.x verticle, for Vert.x's launchers and
 * {@code tensorbus launch}:
 *
 * <pre>{@code
 * java -cp ... io.vertx.launcher.application.VertxApplication \
 *     io.tensorbus.workloads.ddp.DdpFashionMnistVerticle -conf '{"epochs": 1}'
 * java -cp ... io.vertx.core.Launcher run io.tensorbus.workloads.ddp.DdpFashionMnistVerticle -conf '{"epochs": 1}'
 * }</pre>
 *
 * <p>The config ({@link DdpConfig}) is checked in {@link #start()}: a bad one fails the deployment with a
 * message naming the field. Training then runs on a thread of its own, never on the event loop (building DDP
 * and every step block on collectives), with the process group on this verticle's Vert.x instance. Deployed
 * with the no-argument constructor (as the launchers do) the verticle owns its process: when training ends it
 * closes Vert.x and exits with status 0, or prints which rank failed and why and exits with 1. Constructed
 * with a promise, it completes the promise instead and leaves the process alone (tests, embedding).
 */
public final class DdpFashionMnistVerticle extends WorkerVerticle<DdpConfig, DdpFashionMnistTraining.Result> {
    private volatile ProcessGroup group;

    /** The verticle as a launcher deploys it: it exits the process when training ends. */
    public DdpFashionMnistVerticle() {
        super(DdpFashionMnistCommand.NAME, Promise.promise(), true, System.out, Distributed.environment());
    }

    /**
     * A verticle that completes {@code done} with the result (or the failure) and does not exit the process.
     *
     * @param out where rank 0 prints its progress and results
     * @param env the environment whose {@code RANK}, {@code WORLD_SIZE}, ... fill in what the config leaves out
     */
    public DdpFashionMnistVerticle(Promise<DdpFashionMnistTraining.Result> done, PrintStream out,
                                   Map<String, String> env) {
        super(DdpFashionMnistCommand.NAME, done, false, out, env);
    }

    @Override
    protected DdpConfig readConfig(JsonObject json, Map<String, String> env) {
        return DdpConfig.fromJson(json, env);
    }

    @Override
    protected String describe(DdpConfig config) {
        return "rank " + config.rank() + " of " + config.worldSize();
    }

    /** Joins the group on this verticle's Vert.x instance and trains this rank. */
    @Override
    protected DdpFashionMnistTraining.Result work(DdpConfig config) throws Exception {
        if (config.threads() > 0) {
            Threads.set(config.threads());
        }
        group = Distributed.initProcessGroup(config.initOptions(vertx)).await();
        try {
            return new DdpFashionMnistTraining(config.training(), config.commHook(), config.checkpointDir())
                    .run(group, out);
        } finally {
            group.close();
        }
    }

    /** Closing the group makes its pending collectives fail at once. */
    @Override
    protected void abandon() {
        ProcessGroup g = group;
        if (g != null) {
            g.destroy();
        }
    }
}
