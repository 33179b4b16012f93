package io.tensorbus.workloads.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.test.fakecluster.FakeClusterManager;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The parameter server and its trainers in one JVM, each worker on a Vert.x node of its own clustered through
 * FakeClusterManager (the workload's own Hazelcast set-up runs in {@code MultiJvmParameterServerTest}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ParameterServerWorkerTest {
    private final List<Vertx> nodes = new ArrayList<>();

    @AfterEach
    void closeNodes() {
        for (Vertx v : nodes) {
            v.close().await();
        }
    }

    /** Runs a server and {@code trainers} trainers; returns the results by rank and what the server printed. */
    private List<Object> train(int trainers, FashionMnistTraining.Options training) throws Exception {
        List<Future<ParameterServerWorker.Result>> results = new ArrayList<>();
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        start(trainers, training, results, new ArrayList<>(), serverOut);
        List<Object> all = new ArrayList<>();
        for (Future<ParameterServerWorker.Result> r : results) {
            all.add(r.await(100, TimeUnit.SECONDS));
        }
        all.add(serverOut.toString(StandardCharsets.UTF_8));
        return all;
    }

    /** Starts a server and {@code trainers} trainers, each on a thread; fills in their results and workers. */
    private void start(int trainers, FashionMnistTraining.Options training,
                       List<Future<ParameterServerWorker.Result>> results, List<ParameterServerWorker> workers,
                       ByteArrayOutputStream serverOut) throws Exception {
        String cluster = "ps-" + UUID.randomUUID();
        for (int rank = 0; rank <= trainers; rank++) {
            Vertx node = Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered()
                    .await(20, TimeUnit.SECONDS);
            nodes.add(node);
            ParameterServerConfig config = new ParameterServerConfig(training, rank, trainers + 1, cluster,
                    "127.0.0.1", "127.0.0.1", 1, Duration.ofSeconds(30), 0, JobSecret.none());
            PrintStream out = rank == 0 ? new PrintStream(serverOut, true, StandardCharsets.UTF_8)
                    : new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
            Promise<ParameterServerWorker.Result> done = Promise.promise();
            ParameterServerWorker worker = new ParameterServerWorker(config, out);
            workers.add(worker);
            Thread.ofPlatform().start(() -> {
                try {
                    done.complete(worker.run(node));
                } catch (Throwable e) {
                    done.fail(e);
                }
            });
            results.add(done.future());
        }
    }

    private static FashionMnistTraining.Options small(int epochs) {
        return new FashionMnistTraining.Options(epochs, null, 7, 64, 0.05, 0.5, 512);
    }

    @Test
    void twoTrainersTrainTheServersNetworkAndTheServerScoresIt() throws Exception {
        List<Object> r = train(2, small(2));
        String log = (String) r.get(3);
        assertTrue(log.contains("2 trainer(s) x batch 32 (global 64)"), log);
        assertTrue(Pattern.compile("(?m)^epoch 1/2  loss \\d+\\.\\d{4}  [\\d.]+ s  \\d+ samples/s$").matcher(log)
                .find(), log);
        assertTrue(Pattern.compile("(?m)^epoch 2/2  loss ").matcher(log).find(), log);
        assertTrue(Pattern.compile("(?m)^test accuracy \\d+\\.\\d{2}%$").matcher(log).find(), log);
        ParameterServerWorker.Result server = (ParameterServerWorker.Result) r.get(0);
        assertTrue(server.accuracy() >= 0 && server.accuracy() <= 1, "accuracy " + server.accuracy());
        assertTrue(server.lastLoss() > 0 && server.lastLoss() < 2.4, "the loss fell below log(10): " + server);
        for (int rank = 1; rank <= 2; rank++) {
            ParameterServerWorker.Result trainer = (ParameterServerWorker.Result) r.get(rank);
            assertTrue(Double.isNaN(trainer.accuracy()), "trainers do not score: " + trainer);
            assertTrue(trainer.lastLoss() > 0, "trainer " + rank + ": " + trainer);
        }
    }

    @Test
    void turnsInRankOrderMakeARunRepeatable() throws Exception {
        ParameterServerWorker.Result first = (ParameterServerWorker.Result) train(2, small(1)).get(0);
        closeNodes();
        nodes.clear();
        ParameterServerWorker.Result second = (ParameterServerWorker.Result) train(2, small(1)).get(0);
        assertEquals(first.accuracy(), second.accuracy());
        assertEquals(first.lastLoss(), second.lastLoss());
    }

    @Test
    void aTrainerThatLeavesMidTrainingFailsEveryWorkerNamingItInsteadOfHanging() throws Exception {
        List<Future<ParameterServerWorker.Result>> results = new ArrayList<>();
        List<ParameterServerWorker> workers = new ArrayList<>();
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        start(2, new FashionMnistTraining.Options(20, null, 7, 64, 0.05, 0.5, 0), results, workers, serverOut);
        // Once an epoch is done, trainer2 leaves as a killed process would: its agent closes its connections.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!serverOut.toString(StandardCharsets.UTF_8).contains("epoch 1/20")) {
            assertTrue(System.nanoTime() < deadline, "no epoch within 60 s");
            Thread.sleep(20);
        }
        workers.get(2).abandon();
        for (int rank = 0; rank <= 2; rank++) {
            Throwable e = results.get(rank).toCompletionStage().toCompletableFuture().handle((r, t) -> t)
                    .get(40, TimeUnit.SECONDS);
            assertTrue(e != null, "rank " + rank + " failed");
            // The server names the trainer that left; trainer1 then loses the server, which gave up.
            String who = rank == 0 ? "trainer2" : "parameter_server (rank 0)";
            assertTrue(rank == 2 || e.getMessage().contains(who) && e.getMessage().contains("training failed"),
                    "rank " + rank + ": " + e.getMessage());
        }
    }

    @Test
    void aBadConfigFailsTheDeploymentNamingTheField() {
        Vertx vertx = Vertx.vertx();
        nodes.add(vertx);
        Promise<ParameterServerWorker.Result> done = Promise.promise();
        Throwable e = vertx.deployVerticle(new ParameterServerVerticle(done, System.out, Map.of()),
                        new DeploymentOptions().setConfig(new JsonObject().put("worldSize", "two")))
                .toCompletionStage().toCompletableFuture().handle((ok, failure) -> failure).join();
        assertTrue(e != null && e.getMessage().startsWith("parameter-server: bad config: config field 'worldSize'"),
                String.valueOf(e));
    }
}
