package io.tensorbus.workloads.demo;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One process of a distributed workload as a Vert.x verticle, the part the workloads share: the config is
 * read in {@link #start()} (a bad one fails the deployment naming the field), the work runs on a platform
 * thread of its own, never on the event loop, and a verticle that owns its process (deployed by a launcher
 * through its no-argument constructor) closes Vert.x and exits with 0, or prints why it failed and exits with
 * {@link #FAILED_EXIT}. Constructed with a promise, it completes the promise instead and leaves the process
 * alone (tests, embedding).
 *
 * @param <C> the workload's config
 * @param <R> what the work ends with
 */
public abstract class WorkerVerticle<C, R> extends VerticleBase {
    /** The exit status of a process whose work failed. */
    public static final int FAILED_EXIT = 1;

    private static final long CLOSE_SECONDS = 10;

    private final String workload;
    private final Promise<R> done;
    private final boolean ownsProcess;
    /** Where the work prints its progress. */
    protected final PrintStream out;
    private final Map<String, String> env;
    /** Set when Vert.x undeploys the verticle before the work ended (Ctrl-C, SIGTERM from a launcher). */
    private volatile boolean abandoned;

    /**
     * @param workload the workload's name, which starts its error messages
     * @param done completed with the result or the failure
     * @param ownsProcess true to exit the process when the work ends
     * @param env the environment that fills in what the config leaves out
     */
    protected WorkerVerticle(String workload, Promise<R> done, boolean ownsProcess, PrintStream out,
                             Map<String, String> env) {
        this.workload = Objects.requireNonNull(workload, "workload");
        this.done = Objects.requireNonNull(done, "done");
        this.ownsProcess = ownsProcess;
        this.out = Objects.requireNonNull(out, "out");
        this.env = Map.copyOf(env);
    }

    /**
     * Reads the config.
     *
     * @throws IllegalArgumentException naming the field that is wrong and what it allows
     */
    protected abstract C readConfig(JsonObject json, Map<String, String> env);

    /** Who this process is in the job, for thread names and failures ({@code rank 0 of 2}). */
    protected abstract String describe(C config);

    /** Does the work on the verticle's own thread; {@link #vertx} is this verticle's instance. */
    protected abstract R work(C config) throws Exception;

    /** Makes work still running end soon, when the verticle is undeployed before it ended. */
    protected abstract void abandon();

    /** Reads the config and starts the work on its own thread; fails at once, naming the field, when wrong. */
    @Override
    public final Future<?> start() {
        C config;
        try {
            config = readConfig(config(), env);
        } catch (IllegalArgumentException e) {
            // Without the cause: the launcher prints the stack, and the message says all.
            return Future.failedFuture(new IllegalArgumentException(workload + ": bad config: " + e.getMessage()));
        }
        // A platform thread: the work computes for minutes, which would pin a virtual thread's carrier and set
        // off Vert.x's blocked-thread warnings on a worker. Not a daemon: the JVM must not exit meanwhile.
        Thread.ofPlatform().name("tensorbus-" + workload + "-" + describe(config).replace(' ', '-'))
                .start(() -> run(config));
        return Future.succeededFuture();
    }

    /** Leaves work that is still running. */
    @Override
    public final Future<?> stop() {
        if (!done.future().isComplete()) {
            abandoned = true;
            abandon();
        }
        return Future.succeededFuture();
    }

    private void run(C config) {
        try {
            done.complete(work(config));
        } catch (Throwable e) {
            done.fail(new IllegalStateException(describe(config) + " failed: "
                    + (e.getMessage() != null ? e.getMessage() : e.toString()), e));
        }
        if (ownsProcess && !abandoned) {
            exit(done.future());
        }
    }

    /** Says how the work ended, closes Vert.x and exits with 0 or {@link #FAILED_EXIT}. */
    private void exit(Future<R> outcome) {
        if (outcome.failed()) {
            System.err.println(workload + ": " + outcome.cause().getMessage());
        }
        out.flush();
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Exiting anyway: a slow close changes nothing for the result.
        }
        System.exit(outcome.succeeded() ? 0 : FAILED_EXIT);
    }

    /**
     * Runs one process of a workload in this one, as a launched rank does: deploys the verticle {@code make}
     * builds around a promise on a fresh Vert.x with {@code config} and waits for the work to end.
     *
     * @return 0 on success, {@link #FAILED_EXIT} on failure (the reason goes to {@code err})
     */
    public static <R> int runHere(String workload, Function<Promise<R>, WorkerVerticle<?, R>> make,
                                  Supplier<Vertx> vertxFactory, JsonObject config, PrintStream err) {
        Vertx vertx = vertxFactory.get();
        try {
            Promise<R> done = Promise.promise();
            vertx.deployVerticle(make.apply(done), new DeploymentOptions().setConfig(config)).await();
            done.future().await();
            return 0;
        } catch (RuntimeException e) {
            err.println(workload + ": " + e.getMessage());
            return FAILED_EXIT;
        } finally {
            vertx.close().await();
        }
    }
}
