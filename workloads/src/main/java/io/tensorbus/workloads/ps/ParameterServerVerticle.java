package io.tensorbus.workloads.ps;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

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
public final class ParameterServerVerticle extends VerticleBase {
    /** The exit status of a worker that failed. */
    public static final int FAILED_EXIT = 1;

    private static final long CLOSE_SECONDS = 10;

    private final Promise<ParameterServerWorker.Result> done;
    private final boolean ownsProcess;
    private final PrintStream out;
    private final Map<String, String> env;

    /** The verticle as a launcher deploys it: it exits the process when the worker is done. */
    public ParameterServerVerticle() {
        this(Promise.promise(), true, System.out, System.getenv());
    }

    /**
     * A verticle that completes {@code done} with the worker's result (or failure) and does not exit the process.
     *
     * @param out where the server prints its progress
     * @param env the environment whose {@code RANK}, {@code WORLD_SIZE}, ... fill in what the config leaves out
     */
    public ParameterServerVerticle(Promise<ParameterServerWorker.Result> done, PrintStream out,
                                   Map<String, String> env) {
        this(done, false, out, env);
    }

    private ParameterServerVerticle(Promise<ParameterServerWorker.Result> done, boolean ownsProcess,
                                    PrintStream out, Map<String, String> env) {
        this.done = Objects.requireNonNull(done, "done");
        this.ownsProcess = ownsProcess;
        this.out = Objects.requireNonNull(out, "out");
        this.env = Map.copyOf(env);
    }

    /** Reads the config and starts the worker on its own thread; fails at once, naming the field, when wrong. */
    @Override
    public Future<?> start() {
        ParameterServerConfig config;
        try {
            config = ParameterServerConfig.fromJson(config(), env);
        } catch (IllegalArgumentException e) {
            return Future.failedFuture(new IllegalArgumentException(ParameterServerCommand.NAME + ": bad config: "
                    + e.getMessage()));
        }
        // A platform thread that is no daemon: the worker computes for minutes and the JVM must not exit meanwhile.
        Thread.ofPlatform().name("tensorbus-ps-" + ParameterServerWorker.workerName(config.rank()))
                .start(() -> work(config));
        return Future.succeededFuture();
    }

    private void work(ParameterServerConfig config) {
        try {
            done.complete(new ParameterServerWorker(config, out).run(vertx.isClustered() ? vertx : null));
        } catch (Throwable e) {
            done.fail(new IllegalStateException(ParameterServerWorker.workerName(config.rank()) + " (rank "
                    + config.rank() + " of " + config.worldSize() + ") failed: "
                    + (e.getMessage() != null ? e.getMessage() : e.toString()), e));
        }
        if (ownsProcess) {
            exit(done.future());
        }
    }

    /** Says how the worker ended, closes Vert.x and exits with 0 or {@link #FAILED_EXIT}. */
    private void exit(Future<ParameterServerWorker.Result> outcome) {
        if (outcome.failed()) {
            System.err.println(ParameterServerCommand.NAME + ": " + outcome.cause().getMessage());
        }
        out.flush();
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Exiting anyway: a slow close changes nothing for the result.
        }
        System.exit(outcome.succeeded() ? 0 : FAILED_EXIT);
    }
}
