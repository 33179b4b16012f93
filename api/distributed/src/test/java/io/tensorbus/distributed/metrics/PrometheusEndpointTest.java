package io.tensorbus.distributed.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Prometheus endpoint: what it serves, where it may listen, and who may read it. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PrometheusEndpointTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> get(int port, String path, String authorization) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (authorization != null) {
            r.header("Authorization", authorization);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aJobAskedForAPortServesItsCollectivesThere() throws Exception {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put(PrometheusEndpoint.PORT_ENV, "0");
        env.put(PrometheusEndpoint.HOST_ENV, "127.0.0.1");
        PrometheusEndpoint endpoint = PrometheusEndpoint.fromEnvironment(env, JobSecret.none())
                .await(10, TimeUnit.SECONDS);
        try {
            assertSame(endpoint, PrometheusEndpoint.fromEnvironment(env, JobSecret.none()).await(1,
                    TimeUnit.SECONDS), "ranks of one JVM share the endpoint of one address");
            Distributed.spawn(2, Duration.ofMinutes(1), b -> b.groupName("scraped"), pg ->
                    pg.allReduce(Tensor.zeros(4)).await(10, TimeUnit.SECONDS));
            HttpResponse<String> r = get(endpoint.port(), PrometheusEndpoint.PATH, null);
            assertEquals(200, r.statusCode());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            assertTrue(r.body().contains("# TYPE tensorbus_collective_seconds histogram"), r.body());
            assertTrue(r.body().lines().anyMatch(l -> l.startsWith("tensorbus_collective_seconds_count{")
                    && l.contains("group=\"scraped\"") && l.contains("op=\"allReduce\"") && l.contains("rank=\"1\"")
                    && l.endsWith(" 1")), r.body());
            assertEquals(404, get(endpoint.port(), "/other", null).statusCode());
        } finally {
            endpoint.close();
        }
    }

    @Test
    void offLoopbackItNeedsTheSecretAndAnswersOnlyItsToken() throws Exception {
        assertThrows(IllegalStateException.class, () -> PrometheusEndpoint.start("0.0.0.0", 0, JobSecret.none()));
        JobSecret secret = JobSecret.random();
        PrometheusEndpoint endpoint = PrometheusEndpoint.start("0.0.0.0", 0, secret).await(10, TimeUnit.SECONDS);
        try {
            HttpResponse<String> refused = get(endpoint.port(), PrometheusEndpoint.PATH, null);
            assertEquals(401, refused.statusCode());
            assertEquals("Bearer", refused.headers().firstValue("WWW-Authenticate").orElse(null));
            String other = PrometheusEndpoint.bearerToken(JobSecret.random());
            assertEquals(401, get(endpoint.port(), PrometheusEndpoint.PATH, "Bearer " + other).statusCode());
            String token = PrometheusEndpoint.bearerToken(secret);
            assertEquals(200, get(endpoint.port(), PrometheusEndpoint.PATH, "Bearer " + token).statusCode());
        } finally {
            endpoint.close();
        }
    }

    @Test
    void badPortsAndNoPortAreSaidPlainly() {
        assertNull(PrometheusEndpoint.fromEnvironment(Map.of(), JobSecret.none()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                PrometheusEndpoint.fromEnvironment(Map.of(PrometheusEndpoint.PORT_ENV, "ninety"), JobSecret.none()));
        assertTrue(e.getMessage().contains("TENSORBUS_METRICS_PORT=ninety"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PrometheusEndpoint.start("127.0.0.1", 70000,
                JobSecret.none()));
        assertThrows(IllegalArgumentException.class, () -> PrometheusEndpoint.bearerToken(JobSecret.none()));
    }

    @Test
    void aTakenPortFailsTheRanksSetUpNamingIt() throws Exception {
        PrometheusEndpoint taken = PrometheusEndpoint.start("127.0.0.1", 0, JobSecret.none())
                .await(10, TimeUnit.SECONDS);
        try {
            Map<String, String> env = new HashMap<>(System.getenv());
            env.put(PrometheusEndpoint.PORT_ENV, Integer.toString(taken.port()));
            env.put("MASTER_ADDR", "127.0.0.1");
            env.put("MASTER_PORT", Integer.toString(freePort()));
            env.put("RANK", "0");
            env.put("WORLD_SIZE", "1");
            // The rank's group forms (a world of one), then it is destroyed for the port.
            Exception e = assertThrows(Exception.class, () -> Distributed.initProcessGroup(
                    InitOptions.builder().environment(env).build())
                    .await(10, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains("cannot serve metrics on port " + taken.port()), e.getMessage());
        } finally {
            taken.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
