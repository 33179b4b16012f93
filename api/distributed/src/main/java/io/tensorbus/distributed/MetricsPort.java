package io.tensorbus.distributed;

import io.tensorbus.distributed.metrics.PrometheusEndpoint;
import io.vertx.core.Future;

/**
 * The Prometheus endpoint a job asks {@link Distributed#initProcessGroup} for through
 * {@link PrometheusEndpoint#PORT_ENV} ({@code tensorbus launch --metrics-port}): started beside the rendezvous, not
 * before it, so that the group's set-up runs on the caller's thread as without metrics (a continuation of the
 * endpoint's future would run it on the endpoint's event loop); a port already taken fails this rank's set-up,
 * naming the port.
 */
final class MetricsPort {
    private MetricsPort() {
    }

    /** The endpoint {@code options}' environment asks for, once listening; succeeded at once when none is asked. */
    static Future<?> start(InitOptions options) {
        String port = options.environment().get(PrometheusEndpoint.PORT_ENV);
        if (port == null || port.isBlank()) {
            return Future.succeededFuture();
        }
        Future<PrometheusEndpoint> endpoint;
        try {
            endpoint = PrometheusEndpoint.fromEnvironment(options.environment(), options.secret());
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException(PrometheusEndpoint.PORT_ENV + " asks for a Prometheus endpoint, which"
                    + " needs io.micrometer:micrometer-registry-prometheus on the class path", e);
        }
        return endpoint.recover(e -> Future.failedFuture(new IllegalStateException("cannot serve metrics on port "
                + port + " (" + PrometheusEndpoint.PORT_ENV + "): " + e.getMessage(), e)));
    }
}
