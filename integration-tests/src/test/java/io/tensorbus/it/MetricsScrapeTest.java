package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.metrics.PrometheusEndpoint;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus scrapes a running 2-rank job that {@code tensorbus launch --metrics-port P} started: plain HTTP on
 * loopback, text that {@link PrometheusText} reads strictly, and in it each rank's five all-reduces of 1 KiB.
 */
class MetricsScrapeTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void eachRankProcessServesItsMetersOnItsOwnPort() throws Exception {
        int port = freePorts(2);
        List<List<PrometheusText.Sample>> scrapes = scrapeWhileRunning(port, 2, List.of());
        for (int rank = 0; rank < 2; rank++) {
            List<PrometheusText.Sample> s = scrapes.get(rank);
            assertCollectives(s, rank);
            int other = 1 - rank;
            assertFalse(s.stream().anyMatch(x -> ("" + other).equals(x.labels().get("rank"))),
                    "a process serves its own rank's meters only");
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void rankThreadsOfOneJvmShareOnePort() throws Exception {
        int port = freePorts(1);
        List<PrometheusText.Sample> s = scrapeWhileRunning(port, 1, List.of("--ranks-as-threads")).get(0);
        assertCollectives(s, 0);
        assertCollectives(s, 1);
    }

    /**
     * Launches {@link MetricsCheck} on two ranks with {@code --metrics-port port}, scrapes the {@code endpoints}
     * ports from {@code port} on until each holds both ranks' all-reduces it serves, then lets the job end.
     */
    private List<List<PrometheusText.Sample>> scrapeWhileRunning(int port, int endpoints, List<String> launch)
            throws Exception {
        Path release = dir.resolve("release");
        List<String> args = new ArrayList<>(launch);
        args.addAll(List.of("--nproc-per-node", "2", "--metrics-port", Integer.toString(port), "--timeout", "100",
                MetricsCheck.class.getName(), release.toString()));
        CompletableFuture<LaunchResult> job = CompletableFuture.supplyAsync(() ->
                LaunchResult.launch(args.toArray(String[]::new)));
        List<List<PrometheusText.Sample>> scrapes = new ArrayList<>();
        try {
            for (int e = 0; e < endpoints; e++) {
                scrapes.add(scrapeUntilDone(port + e, endpoints == 1 ? 2 : 1, job));
            }
        } finally {
            Files.writeString(release, "go");
        }
        job.get(100, TimeUnit.SECONDS).succeeded();
        return scrapes;
    }

    /** Scrapes {@code port} until it shows {@code ranks} ranks' five all-reduces (or the job ends: a failure). */
    private List<PrometheusText.Sample> scrapeUntilDone(int port, int ranks, CompletableFuture<LaunchResult> job)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String last = "(nothing answered)";
        while (System.nanoTime() < deadline) {
            if (job.isDone()) {
                throw new AssertionError("the job ended before port " + port + " was scraped: " + job.get());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + PrometheusEndpoint.PATH)).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                last = r.body();
                List<PrometheusText.Sample> s = PrometheusText.parse(last);
                if (finished(s, "tensorbus_collective_seconds_count", ranks, 5)
                        && finished(s, "tensorbus_collective_bytes_total", ranks, 5 * 1024)) {
                    return s;
                }
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("port " + port + " never showed the all-reduces; last answer: " + last);
    }

    /**
     * Whether {@code ranks} ranks' all-reduce sample {@code name} reads {@code value}. A scrape reads one meter after
     * another while the job runs, so the timer may already count the fifth all-reduce while the byte counter beside
     * it does not yet: the scrape is done when both show it.
     */
    private static boolean finished(List<PrometheusText.Sample> s, String name, int ranks, double value) {
        List<PrometheusText.Sample> found = s.stream().filter(x -> x.name().equals(name)
                && "allReduce".equals(x.labels().get("op"))).toList();
        return found.size() == ranks && found.stream().allMatch(x -> x.value() == value);
    }

    /** Rank {@code rank}'s five all-reduces of 1 KiB: count, bytes, histogram, and the gauges beside them. */
    private static void assertCollectives(List<PrometheusText.Sample> s, int rank) {
        String r = Integer.toString(rank);
        PrometheusText.Sample count = one(s, "tensorbus_collective_seconds_count", r);
        assertEquals("float32", count.labels().get("dtype"));
        assertEquals("<=4KiB", count.labels().get("size"));
        assertEquals("success", count.labels().get("outcome"));
        assertEquals(5, count.value());
        assertEquals(5 * 1024, one(s, "tensorbus_collective_bytes_total", r).value());
        assertTrue(one(s, "tensorbus_collective_seconds_sum", r).value() > 0);
        List<PrometheusText.Sample> buckets = s.stream().filter(x -> x.name().equals(
                "tensorbus_collective_seconds_bucket") && r.equals(x.labels().get("rank"))
                && "allReduce".equals(x.labels().get("op"))).toList();
        assertTrue(buckets.size() > 10, "a percentile histogram: " + buckets.size() + " buckets");
        double previous = 0;
        for (PrometheusText.Sample b : buckets) {
            assertTrue(b.value() >= previous, "cumulative buckets");
            previous = b.value();
        }
        assertEquals("+Inf", buckets.getLast().labels().get("le"));
        assertEquals(5, buckets.getLast().value());
        assertTrue(s.stream().anyMatch(x -> x.name().equals("tensorbus_memory_allocated_bytes")));
        assertTrue(s.stream().anyMatch(x -> x.name().equals("tensorbus_store_seconds_count")),
                "the rank's store requests");
    }

    private static PrometheusText.Sample one(List<PrometheusText.Sample> s, String name, String rank) {
        List<PrometheusText.Sample> found = s.stream().filter(x -> x.name().equals(name)
                && rank.equals(x.labels().get("rank")) && "allReduce".equals(x.labels().get("op"))).toList();
        assertEquals(1, found.size(), name + " of rank " + rank + ": " + found);
        return found.getFirst();
    }

    /** A port P such that P .. P + n - 1 are free now. */
    private static int freePorts(int n) throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int p = ThreadLocalRandom.current().nextInt(20_000, 60_000);
            if (allFree(p, n)) {
                return p;
            }
        }
        throw new IOException("no " + n + " free ports in a row");
    }

    private static boolean allFree(int p, int n) {
        for (int i = 0; i < n; i++) {
            try (ServerSocket s = new ServerSocket(p + i)) {
                s.setReuseAddress(true);
            } catch (IOException taken) {
                return false;
            }
        }
        return true;
    }
}
