package io.tensorbus.distributed.metrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorbus.c10d.JobSecret;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Serves this process's tensorbus meters to Prometheus: {@code GET /metrics} answers the text exposition format of a
 * {@link PrometheusMeterRegistry} bound with {@link TensorbusMetrics}. A job asks for one with
 * {@code tensorbus launch --metrics-port P} (rank processes serve on {@code P + LOCAL_RANK}, a JVM of rank threads on
 * {@code P}), which sets {@value #PORT_ENV} for {@code Distributed.initProcessGroup}; an embedding application calls
 * {@link #start} or binds a registry of its own instead.
 *
 * <p>It listens on loopback ({@value #HOST_ENV} names another address). Anywhere else it needs the job's secret and
 * answers only requests that carry {@code Authorization: Bearer TOKEN}, where TOKEN is {@link #bearerToken} of that
 * secret: the meters name the job's functions, groups and hosts. Needs {@code micrometer-registry-prometheus} on the
 * class path. Thread-safe; its requests are answered on a Vert.x event loop.
 */
public final class PrometheusEndpoint implements AutoCloseable {
    /** The environment variable holding the port to serve on (0: a free one). */
    public static final String PORT_ENV = "TENSORBUS_METRICS_PORT";
    /** The environment variable holding the address to listen on (default {@code 127.0.0.1}). */
    public static final String HOST_ENV = "TENSORBUS_METRICS_HOST";
    /** The path Prometheus scrapes. */
    public static final String PATH = "/metrics";
    /** The content type of the text exposition format 0.0.4. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final Map<String, Future<PrometheusEndpoint>> BY_ADDRESS = new ConcurrentHashMap<>();
    /** How long a failed start waits for its Vert.x to close before it reports the failure anyway, in ms. */
    private static final long CLOSE_GRACE_MILLIS = 2000;

    private final Vertx vertx;
    private final HttpServer server;
    private final PrometheusMeterRegistry registry;
    private final TensorbusMetrics binding;
    private final String host;

    private PrometheusEndpoint(Vertx vertx, HttpServer server, PrometheusMeterRegistry registry,
                               TensorbusMetrics binding, String host) {
        this.vertx = vertx;
        this.server = server;
        this.registry = registry;
        this.binding = binding;
        this.host = host;
    }

    /**
     * Starts serving tensorbus's meters on {@code host:port} (port 0: a free one) on a Vert.x of its own.
     *
     * @param secret the job's secret: needed for a non-loopback {@code host}, whose requests must then prove it
     * @return the endpoint once it listens; failed when the port is taken
     * @throws IllegalArgumentException for a port outside 0..65535 or an unknown host
     * @throws IllegalStateException for a non-loopback host without a secret
     */
    public static Future<PrometheusEndpoint> start(String host, int port, JobSecret secret) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(secret, "secret (JobSecret.none() for none)");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("metrics port " + port + " must be in 0..65535");
        }
        secret.checkBind(host, "the metrics endpoint");
        String token = JobSecret.isLoopback(host) || !secret.isPresent() ? null : bearerToken(secret);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        TensorbusMetrics binding = new TensorbusMetrics();
        binding.bindTo(registry);
        Vertx vertx = Vertx.vertx(new VertxOptions().setUseDaemonThread(true).setEventLoopPoolSize(1));
        HttpServer server = vertx.createHttpServer();
        server.requestHandler(r -> answer(r, registry, token));
        // A promise of no context: a failure is told after its Vert.x closed, whose event loop is then gone.
        Promise<PrometheusEndpoint> started = Promise.promise();
        server.listen(port, host).onComplete(r -> {
            if (r.succeeded()) {
                started.complete(new PrometheusEndpoint(vertx, r.result(), registry, binding, host));
            } else {
                binding.close();
                vertx.close().onComplete(c -> started.tryFail(r.cause()));
                // Vert.x may never complete that close: a server whose listen failed can try to notify the event
                // loop the close is shutting down (Netty rejects it), and the rank's set-up would then wait forever.
                CompletableFuture.delayedExecutor(CLOSE_GRACE_MILLIS, TimeUnit.MILLISECONDS)
                        .execute(() -> started.tryFail(r.cause()));
            }
        });
        return started.future();
    }

    /**
     * The endpoint {@code env} asks for with {@value #PORT_ENV} (and {@value #HOST_ENV}), started once per
     * address in this JVM, so that ranks running as threads share it; null when {@code env} asks for none.
     *
     * @throws IllegalArgumentException when {@value #PORT_ENV} is not a port number
     */
    public static Future<PrometheusEndpoint> fromEnvironment(Map<String, String> env, JobSecret secret) {
        String port = env.get(PORT_ENV);
        if (port == null || port.isBlank()) {
            return null;
        }
        int p;
        try {
            p = Integer.parseInt(port.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PORT_ENV + "=" + port + " is not a port number (0 to 65535)");
        }
        String host = env.getOrDefault(HOST_ENV, "127.0.0.1");
        Future<PrometheusEndpoint> f = BY_ADDRESS.computeIfAbsent(host + ":" + p, a -> start(host, p, secret));
        f.onFailure(e -> BY_ADDRESS.remove(host + ":" + p, f));
        return f;
    }

    /**
     * The bearer token that proves {@code secret} to an endpoint off loopback: hex of HMAC-SHA256 under the secret of
     * {@code "tensorbus-metrics"}. Give it to Prometheus ({@code authorization: credentials}).
     *
     * @throws IllegalArgumentException for {@link JobSecret#none()}
     */
    public static String bearerToken(JobSecret secret) {
        if (!secret.isPresent()) {
            throw new IllegalArgumentException("no job secret: a bearer token proves one");
        }
        return HexFormat.of().formatHex(secret.mac("tensorbus-metrics".getBytes(StandardCharsets.UTF_8)));
    }

    private static void answer(HttpServerRequest r, PrometheusMeterRegistry registry, String token) {
        if (token != null && !authorized(r.getHeader("Authorization"), token)) {
            r.response().setStatusCode(401).putHeader("WWW-Authenticate", "Bearer").end();
            return;
        }
        if (!PATH.equals(r.path())) {
            r.response().setStatusCode(404).end("tensorbus serves its meters at " + PATH + "\n");
            return;
        }
        r.response().putHeader("Content-Type", CONTENT_TYPE).end(registry.scrape());
    }

    private static boolean authorized(String header, String token) {
        String expected = "Bearer " + token;
        return header != null && MessageDigest.isEqual(header.getBytes(StandardCharsets.UTF_8),
                expected.getBytes(StandardCharsets.UTF_8));
    }

    /** The port it listens on. */
    public int port() {
        return server.actualPort();
    }

    /** The address it listens on. */
    public String host() {
        return host;
    }

    /** The registry it serves (tensorbus's meters; an application may add its own). */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Stops serving and unbinds its registry. */
    @Override
    public void close() {
        BY_ADDRESS.values().removeIf(f -> f.succeeded() && f.result() == this);
        binding.close();
        server.close().onComplete(r -> vertx.close());
    }
}
