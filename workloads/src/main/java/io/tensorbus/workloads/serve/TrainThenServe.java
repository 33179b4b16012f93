package io.tensorbus.workloads.serve;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.eventbus.EventBusBridge;
import io.tensorbus.distributed.metrics.TensorbusMetrics;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Module;
import io.tensorbus.workloads.ddp.DdpFashionMnistTraining;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Train, then serve: trains the Fashion-MNIST network with DDP (ranks as threads of this JVM), hands the trained
 * parameters to a serving RPC worker ({@link ClassifierWorker}), serves its {@code classify} function on the event
 * bus through an {@link EventBusBridge}, and answers HTTP requests with an HTTP verticle ({@link ClassifyVerticle})
 * that calls it over the event bus; the process's meters, training's and serving's, are scraped at
 * {@code /metrics}. {@link #close()} stops it all.
 */
public final class TrainThenServe implements AutoCloseable {
    /** The serving worker's name. */
    public static final String WORKER = "classifier";

    private final TensorbusMetrics metrics;
    private final Vertx vertx;
    private final RpcAgent agent;
    private final EventBusBridge bridge;
    private final int port;
    private final DdpFashionMnistTraining.Result trained;

    private TrainThenServe(TensorbusMetrics metrics, Vertx vertx, RpcAgent agent, EventBusBridge bridge, int port,
                           DdpFashionMnistTraining.Result trained) {
        this.metrics = metrics;
        this.vertx = vertx;
        this.agent = agent;
        this.bridge = bridge;
        this.port = port;
        this.trained = trained;
    }

    /**
     * Trains on {@code world} rank threads with {@code options}, then serves on {@code host:port} (0: a free port).
     * Blocks until it serves; rank 0 of the training prints to {@code out}.
     *
     * @throws IllegalArgumentException for a world below 1 or a port outside 0..65535
     * @throws Exception when training fails or the server cannot start
     */
    public static TrainThenServe start(FashionMnistTraining.Options options, int world, String host, int port,
                                       PrintStream out) throws Exception {
        Objects.requireNonNull(options, "options");
        if (world < 1 || port < 0 || port > 65535) {
            throw new IllegalArgumentException("need a world of at least 1 and a port in 0..65535, got " + world
                    + " and " + port);
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        TensorbusMetrics metrics = new TensorbusMetrics();
        metrics.bindTo(registry);
        AtomicReference<DdpFashionMnistTraining.Result> result = new AtomicReference<>();
        Distributed.spawn(world, Duration.ofHours(2), pg -> {
            DdpFashionMnistTraining.Result r = new DdpFashionMnistTraining(options).run(pg, out);
            if (pg.rank() == 0) {
                result.set(r);
            }
        });
        ClassifierWorker worker = new ClassifierWorker(result.get().model().stateDict());
        Vertx vertx = Distributed.newVertx();
        JobSecret secret = JobSecret.random();
        RpcAgent agent = Rpc.init(WORKER, 0, 1, RpcOptions.builder().vertx(vertx).secret(secret)
                .store(new HashStore(Duration.ofMinutes(1))).registry(new RpcRegistry()
                        .register(ClassifierWorker.CLASSIFY, worker::call)).build()).await(60, TimeUnit.SECONDS);
        EventBusBridge bridge = EventBusBridge.serve(agent, vertx.eventBus(), secret, ClassifierWorker.CLASSIFY);
        ClassifyVerticle http = new ClassifyVerticle(secret, WORKER, registry, host, port);
        vertx.deployVerticle(http).await(60, TimeUnit.SECONDS);
        return new TrainThenServe(metrics, vertx, agent, bridge, http.actualPort(), result.get());
    }

    /** The port the HTTP verticle listens on. */
    public int port() {
        return port;
    }

    /** The test accuracy the trainers measured, in [0, 1]. */
    public double trainerAccuracy() {
        return trained.accuracy();
    }

    /** The network as the trainers left it (the serving worker has its own copy). */
    public Module trainedModel() {
        return trained.model();
    }

    /** Stops serving: the HTTP verticle, the bridge, the worker and the meters' binding. */
    @Override
    public void close() throws Exception {
        bridge.closeAsync().await(10, TimeUnit.SECONDS);
        agent.shutdown();
        vertx.close().await(30, TimeUnit.SECONDS);
        metrics.close();
    }
}
