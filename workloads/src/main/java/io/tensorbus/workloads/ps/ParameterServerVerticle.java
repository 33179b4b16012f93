package io.tensorbus.workloads.ps;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.Map;

/**
 * One worker of the parameter-server workload as a Vert.x verticle, for Vert.x's launchers and
 * {@code tensorbus launch}:
 *
 * <pre>{@code
 * java -cp ... io.vertx.launcher.application.VertxApplication \
 *     io.tensorbus.workloads.ps.ParameterServerVerticle -conf '{"epochs": 1}'
 * }</pre>
 *
 * <p>The config ({@link ParameterServerConfig}) is checked in {@link #start()}: a bad one fails the deployment
 * with a message naming the field. The worker then runs on a thread of its own, never on the event loop. It
 * meets the others through the verticle's Vert.x when that one is clustered, else through a Hazelcast member
 * of its own on the config's cluster and ports. Deployed with the no-argument constructor (as the launchers
 * do) the verticle owns its process: when the worker is done it closes Vert.x and exits with status 0, or
 * prints why it failed and exits with 1. Constructed with a promise, it completes the promise instead.
 */
public final class ParameterServerVerticle
        extends WorkerVerticle<ParameterServerConfig, ParameterServerWorker.Result> {
    private volatile ParameterServerWorker worker;

    /** The verticle as a launcher deploys it: it exits the process when the worker is done. */
    public ParameterServerVerticle() {
        super(ParameterServerCommand.NAME, Promise.promise(), true, System.out, Distributed.environment());
    }

    /**
     * A verticle that completes {@code done} with the worker's result (or failure) and does not exit the process.
     *
     * @param out where the server prints its progress
     * @param env the environment whose {@code RANK}, {@code WORLD_SIZE}, ... fill in what the config leaves out
     */
    public ParameterServerVerticle(Promise<ParameterServerWorker.Result> done, PrintStream out,
                                   Map<String, String> env) {
        super(ParameterServerCommand.NAME, done, false, out, env);
    }

    @Override
    protected ParameterServerConfig readConfig(JsonObject json, Map<String, String> env) {
        return ParameterServerConfig.fromJson(json, env);
    }

    @Override
    protected String describe(ParameterServerConfig config) {
        return ParameterServerWorker.workerName(config.rank()) + " (rank " + config.rank() + " of "
                + config.worldSize() + ")";
    }

    /** Runs the worker, through this verticle's Vert.x when it is clustered. */
    @Override
    protected ParameterServerWorker.Result work(ParameterServerConfig config) throws Exception {
        worker = new ParameterServerWorker(config, out);
        return worker.run(vertx.isClustered() ? vertx : null);
    }

    /** Shutting its RPC agent down makes the worker's pending calls fail at once. */
    @Override
    protected void abandon() {
        ParameterServerWorker w = worker;
        if (w != null) {
            w.abandon();
        }
    }
}
