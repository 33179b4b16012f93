package io.tensorbus.workloads.ddp;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Threads;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

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
public final class DdpFashionMnistVerticle extends VerticleBase {
    /** The exit status of a rank whose training failed. */
    public static final int FAILED_EXIT = 1;

    private static final long CLOSE_SECONDS = 10;

    private final Promise<DdpFashionMnistTraining.Result> done;
    private final boolean ownsProcess;
    private final PrintStream out;
    private final Map<String, String> env;
    private volatile ProcessGroup group;
    /** Set when Vert.x undeploys the verticle before training ended (Ctrl-C, SIGTERM from a launcher). */
    private volatile boolean abandoned;

    /** The verticle as a launcher deploys it: it exits the process when training ends. */
    public DdpFashionMnistVerticle() {
        this(Promise.promise(), true, System.out, System.getenv());
    }

    /**
     * A verticle that completes {@code done} with the result (or the failure) and does not exit the process.
     *
     * @param out where rank 0 prints its progress and results
     * @param env the environment whose {@code RANK}, {@code WORLD_SIZE}, ... fill in what the config leaves out
     */
    public DdpFashionMnistVerticle(Promise<DdpFashionMnistTraining.Result> done, PrintStream out,
                                   Map<String, String> env) {
        this(done, false, out, env);
    }

    private DdpFashionMnistVerticle(Promise<DdpFashionMnistTraining.Result> done, boolean ownsProcess,
                                    PrintStream out, Map<String, String> env) {
        this.done = Objects.requireNonNull(done, "done");
        this.ownsProcess = ownsProcess;
        this.out = Objects.requireNonNull(out, "out");
        this.env = Map.copyOf(env);
    }

    /**
     * Reads the config and starts training on its own thread; fails at once, naming the field, when the
     * config is wrong.
     */
    @Override
    public Future<?> start() {
        DdpConfig config;
        try {
            config = DdpConfig.fromJson(config(), env);
        } catch (IllegalArgumentException e) {
            // Without the cause: the launcher prints the stack, and the message says all.
            return Future.failedFuture(new IllegalArgumentException("ddp-fashion-mnist: bad config: "
                    + e.getMessage()));
        }
        // A platform thread: the loop computes for minutes, which would pin a virtual thread's carrier and set
        // off Vert.x's blocked-thread warnings on a worker. Not a daemon: the JVM must not exit mid-training.
        Thread.ofPlatform().name("tensorbus-ddp-rank-" + config.rank()).start(() -> train(config));
        return Future.succeededFuture();
    }

    /** Leaves a training that is still running: closing its group makes its pending collectives fail at once. */
    @Override
    public Future<?> stop() {
        if (!done.future().isComplete()) {
            abandoned = true;
            ProcessGroup g = group;
            if (g != null) {
                g.destroy();
            }
        }
        return Future.succeededFuture();
    }

    private void train(DdpConfig config) {
        try {
            if (config.threads() > 0) {
                Threads.set(config.threads());
            }
            group = Distributed.initProcessGroup(config.initOptions(vertx)).await();
            try {
                done.complete(new DdpFashionMnistTraining(config.training()).run(group, out));
            } finally {
                group.close();
            }
        } catch (Throwable e) {
            done.fail(new IllegalStateException("rank " + config.rank() + " of " + config.worldSize() + " failed: "
                    + (e.getMessage() != null ? e.getMessage() : e.toString()), e));
        }
        if (ownsProcess && !abandoned) {
            exit(done.future());
        }
    }

    /** Says how training ended, closes Vert.x and exits with 0 or {@link #FAILED_EXIT}. */
    private void exit(Future<DdpFashionMnistTraining.Result> outcome) {
        if (outcome.failed()) {
            System.err.println("ddp-fashion-mnist: " + outcome.cause().getMessage());
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
