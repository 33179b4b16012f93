package io.tensorbus.workloads.serve;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.eventbus.EventBusBridge;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/**
 * The HTTP face of {@link TrainThenServe}: {@code POST /classify} takes 8-bit 28 x 28 grayscale images, row by row,
 * as the request body ({@code application/octet-stream}, N x 784 bytes) and answers
 * {@code {"classes": [...], "labels": [...]}}, asking the serving worker over the event bus
 * ({@link EventBusBridge#call}); {@code GET /metrics} is the Prometheus scrape of the process's meters. Its handlers
 * run on its event loop and never block.
 */
final class ClassifyVerticle extends VerticleBase {
    /** The most images one request may carry. */
    static final int MAX_IMAGES = 4096;
    private static final int PIXELS = FashionMnist.IMAGE_SIZE * FashionMnist.IMAGE_SIZE;

    private final JobSecret secret;
    private final String worker;
    private final PrometheusMeterRegistry registry;
    private final String host;
    private final int port;
    private HttpServer server;

    ClassifyVerticle(JobSecret secret, String worker, PrometheusMeterRegistry registry, String host, int port) {
        this.secret = secret;
        this.worker = worker;
        this.registry = registry;
        this.host = host;
        this.port = port;
    }

    @Override
    public Future<?> start() {
        Router router = Router.router(vertx);
        router.post("/classify").handler(BodyHandler.create().setBodyLimit((long) MAX_IMAGES * PIXELS))
                .handler(this::classify);
        router.get("/metrics").handler(rc -> rc.response().putHeader("Content-Type",
                "text/plain; version=0.0.4; charset=utf-8").end(registry.scrape()));
        return vertx.createHttpServer().requestHandler(router).listen(port, host).onSuccess(s -> server = s);
    }

    /** The port it listens on, once started. */
    int actualPort() {
        return server.actualPort();
    }

    private void classify(RoutingContext rc) {
        byte[] pixels = rc.body().buffer() == null ? new byte[0] : rc.body().buffer().getBytes();
        if (pixels.length == 0 || pixels.length % PIXELS != 0) {
            rc.response().setStatusCode(400).end("the body must be whole 28 x 28 images of 8-bit pixels (N x "
                    + PIXELS + " bytes), got " + pixels.length + " bytes\n");
            return;
        }
        EventBusBridge.<int[]>call(vertx.eventBus(), secret, worker, ClassifierWorker.CLASSIFY, (Object) pixels)
                .onSuccess(classes -> {
                    JsonArray ids = new JsonArray();
                    JsonArray labels = new JsonArray();
                    for (int c : classes) {
                        ids.add(c);
                        labels.add(FashionMnist.CLASSES.get(c));
                    }
                    rc.response().putHeader("Content-Type", "application/json")
                            .end(new JsonObject().put("classes", ids).put("labels", labels).encode());
                })
                .onFailure(e -> rc.response().setStatusCode(502).end("the classifier failed: " + e.getMessage()
                        + "\n"));
    }
}
