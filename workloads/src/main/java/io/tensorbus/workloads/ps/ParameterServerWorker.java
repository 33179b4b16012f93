package io.tensorbus.workloads.ps;

import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.rpc.Rpc;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.tensor.Threads;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.TrainingLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One worker of the parameter-server workload (PyTorch's parameter-server RPC tutorial on Fashion-MNIST): it
 * meets the others through {@code cluster://<cluster>} on a Vert.x clustered over Hazelcast, then rank 0, the
 * server ({@value #SERVER}), tells every trainer ({@code trainer1} ..) to train, prints a line per epoch and
 * the test accuracy of the trained network, and all shut down together.
 */
public final class ParameterServerWorker {
    /** The server's worker name, as in the tutorial. */
    public static final String SERVER = "parameter_server";

    /**
     * What a worker ended with.
     *
     * @param accuracy the test accuracy in [0, 1] of the server's network; NaN on trainers, which do not
     *     score it
     * @param lastLoss the mean loss of the last epoch (the server: over all trainers; a trainer: its own)
     * @param samplesPerSecond images per second of the last epoch (the server: over all trainers)
     */
    public record Result(double accuracy, double lastLoss, double samplesPerSecond) {
    }

    /**
     * Held so that its level stays: Hazelcast's member logs would bury the training's lines (and at the end
     * every member warns of the others leaving); a lost worker is reported by the RPC agent anyway.
     */
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

    private final ParameterServerConfig config;
    private final PrintStream out;
    private volatile RpcAgent agent;

    /**
     * A worker with the given settings.
     *
     * @param out where the server prints its progress, and trainer 1 its progress bar
     */
    public ParameterServerWorker(ParameterServerConfig config, PrintStream out) {
        this.config = Objects.requireNonNull(config, "config");
        this.out = Objects.requireNonNull(out, "out");
    }

    /** The name of the worker of {@code rank}: the server for 0, {@code trainer<rank>} otherwise. */
    public static String workerName(int rank) {
        return rank == 0 ? SERVER : "trainer" + rank;
    }

    /**
     * Runs this worker's part; blocks until training ended, so never call it on a Vert.x event loop.
     *
     * @param clustered a clustered Vert.x to meet through, or null to join the config's Hazelcast cluster
     *     with one of its own (closed at the end)
     * @throws IOException when the data cannot be read
     * @throws IllegalStateException naming the worker and the cause when meeting, training or shutting down fails
     */
    public Result run(Vertx clustered) throws IOException {
        if (config.threads() > 0) {
            Threads.set(config.threads());
        }
        HAZELCAST_LOG.setLevel(Level.SEVERE);
        Vertx vertx = clustered != null ? clustered : await(HazelcastCluster.join(config.cluster(),
                config.clusterHost(), config.clusterPort(), config.clusterSeed(), joinSeconds()),
                config.timeout().plusSeconds(5), "joining cluster " + config.cluster());
        try {
            return config.isServer() ? serve(vertx) : train(vertx);
        } finally {
            if (clustered == null) {
                vertx.close().await();
            }
        }
    }

    /** The member's join deadline: the config's timeout, whole seconds. */
    private int joinSeconds() {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, config.timeout().toSeconds()));
    }

    private Result serve(Vertx vertx) throws IOException {
        FashionMnistTraining.Options options = config.training();
        FashionMnist train = options.dataset(true);
        FashionMnist test = options.dataset(false);
        ParameterServer server = new ParameterServer(options.seed(), config.trainers(), options.epochs(),
                config.timeout(), out);
        RpcAgent agent = join(vertx, server.registry());
        boolean graceful = false;
        try {
            header(train.size(), test.size());
            server.start();
            Duration allEpochs = config.timeout().multipliedBy(options.epochs());
            List<Future<Object>> trainers = new ArrayList<>();
            for (int rank = 1; rank < config.worldSize(); rank++) {
                trainers.add(agent.rpcAsync(agent.workerInfo(rank), allEpochs, Trainer.TRAIN));
            }
            await(Future.all(trainers), allEpochs.plusSeconds(5), "training");
            server.releaseParameters();
            double accuracy = TrainingLoop.correct(server.model(), test.images(), test.labels())
                    / (double) Math.max(1, test.size());
            out.println(TrainingLoop.accuracyLine(accuracy));
            out.flush();
            graceful = true;
            double[] last = server.lastEpoch();
            return new Result(accuracy, last[0], last[1]);
        } finally {
            shutdown(agent, graceful);
        }
    }

    private Result train(Vertx vertx) {
        int index = config.rank() - 1;
        Trainer trainer = new Trainer(config.training(), index, config.trainers(), index == 0 ? out : null);
        RpcAgent agent = join(vertx, trainer.registry());
        boolean graceful = false;
        try {
            // The server's call starts training; a lost server fails this trainer's calls, so the wait ends.
            TrainingLoop.EpochStats last = await(trainer.done(),
                    config.timeout().multipliedBy(config.training().epochs() + 1L), "training");
            graceful = true;
            return new Result(Double.NaN, last.meanLoss(), last.samplesPerSecond());
        } finally {
            shutdown(agent, graceful);
        }
    }

    private RpcAgent join(Vertx vertx, RpcRegistry registry) {
        RpcOptions options = RpcOptions.builder().vertx(vertx).initMethod("cluster://" + config.cluster())
                .registry(registry).timeout(config.timeout()).initTimeout(config.timeout()).secret(config.secret())
                .build();
        agent = await(Rpc.init(workerName(config.rank()), config.rank(), config.worldSize(), options),
                config.timeout().plusSeconds(5), "meeting the other workers through cluster://" + config.cluster());
        return agent;
    }

    /** Leaves the job at once: the RPC agent shuts down without waiting, so every pending call fails. */
    public void abandon() {
        RpcAgent a = agent;
        if (a != null) {
            a.shutdown(false);
        }
    }

    /** A graceful shutdown waits for every worker (a barrier); after a failure this worker leaves at once. */
    private void shutdown(RpcAgent agent, boolean graceful) {
        if (graceful) {
            agent.shutdown();
        } else {
            agent.shutdown(false);
        }
    }

    private <T> T await(Future<T> future, Duration deadline, String what) {
        try {
            return future.await(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException(workerName(config.rank()) + ": " + what + " did not end within "
                    + deadline.toSeconds() + " s", e);
        } catch (RuntimeException e) {
            throw new IllegalStateException(workerName(config.rank()) + ": " + what + " failed: " + e.getMessage(), e);
        }
    }

    private void header(int trainSize, int testSize) {
        FashionMnistTraining.Options o = config.training();
        out.printf(Locale.ROOT, "tensorbus parameter server: tutorial network on Fashion-MNIST (%s), %d training and"
                + " %d test images; the parameters on %s, %d trainer(s) x batch %d (global %d), each on its share of"
                + " every epoch, taking turns; DistributedOptimizer SGD lr %s momentum %s; workers meet through"
                + " cluster://%s%n", o.dataName(),
                trainSize, testSize, SERVER, config.trainers(), config.perTrainerBatch(),
                config.perTrainerBatch() * config.trainers(), o.lr(), o.momentum(), config.cluster());
        out.flush();
    }
}
