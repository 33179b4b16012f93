package io.tensorbus.workloads.ps;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.internal.distributed.AdvertisedHost;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of one worker of the parameter-server workload, read from the verticle's JSON config with the
 * environment of {@code tensorbus launch} as defaults. Rank 0 is the parameter server; ranks 1 .. worldSize-1
 * are the trainers.
 *
 * <table>
 *   <caption>config fields</caption>
 *   <tr><th>field</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code rank}</td><td>{@code RANK}, else 0</td><td>this worker's rank; 0 is the server</td></tr>
 *   <tr><td>{@code worldSize}</td><td>{@code WORLD_SIZE}, else 2</td><td>the server and the trainers</td></tr>
 *   <tr><td>{@code cluster}</td><td>{@code tensorbus-ps-<MASTER_PORT>}</td><td>the Hazelcast cluster's name,
 *       also the {@code cluster://} job the workers meet in</td></tr>
 *   <tr><td>{@code clusterHost}</td><td>this host's address on the route to {@code MASTER_ADDR}
 *       ({@code TENSORBUS_LOCAL_ADDR} and {@code TENSORBUS_SOCKET_IFNAME} choose another), else 127.0.0.1</td>
 *       <td>the address this worker's Hazelcast member listens on, which the others connect to</td></tr>
 *   <tr><td>{@code clusterSeed}</td><td>{@code MASTER_ADDR}, else {@code clusterHost}</td><td>the host whose
 *       member on {@code clusterPort} the members of other hosts join through</td></tr>
 *   <tr><td>{@code clusterPort}</td><td>{@code MASTER_PORT + 1}; required without it</td><td>the first of the
 *       {@value HazelcastCluster#PORT_COUNT} ports the members may take</td></tr>
 *   <tr><td>{@code timeoutSeconds}</td><td>300</td><td>deadline of meeting and of every RPC</td></tr>
 *   <tr><td>{@code threads}</td><td>cores / {@code LOCAL_WORLD_SIZE}, else unchanged</td><td>compute threads</td></tr>
 *   <tr><td>{@code epochs}</td><td>5</td><td>passes of the trainers over the training data</td></tr>
 *   <tr><td>{@code dataDir}</td><td>embedded subset</td><td>a Fashion-MNIST directory</td></tr>
 *   <tr><td>{@code batchSize}</td><td>128</td><td>the global batch, as the DDP workload's: each trainer
 *       takes batchSize / trainers images per step</td></tr>
 *   <tr><td>{@code lr}, {@code momentum}</td><td>0.01, 0.5</td><td>SGD's settings</td></tr>
 *   <tr><td>{@code seed}</td><td>1234</td><td>initial weights, dropout and shuffling</td></tr>
 *   <tr><td>{@code limit}</td><td>0 (all)</td><td>training images per epoch, over all trainers</td></tr>
 * </table>
 *
 * @param training the hyper-parameters and data; {@code batchSize} is the global batch, divided among the
 *     trainers
 * @param rank this worker's rank, in {@code [0, worldSize)}
 * @param worldSize the server and the trainers, at least 2
 * @param cluster the cluster's name
 * @param clusterHost the address of this worker's Hazelcast member
 * @param clusterSeed the host of the member the others join through
 * @param clusterPort the first port of the members' range
 * @param timeout the deadline of meeting and of every call
 * @param threads the compute threads to use, or 0 to leave the count as it is
 * @param secret the job's secret, from {@code TENSORBUS_SECRET} or {@code TENSORBUS_SECRET_FILE}, else none
 */
public record ParameterServerConfig(FashionMnistTraining.Options training, int rank, int worldSize, String cluster,
        String clusterHost, String clusterSeed, int clusterPort, Duration timeout, int threads, JobSecret secret) {

    /** The config fields, in the order the error messages list them. */
    public static final List<String> FIELDS = List.of("rank", "worldSize", "cluster", "clusterHost", "clusterSeed",
            "clusterPort", "timeoutSeconds", "threads", "epochs", "dataDir", "batchSize", "lr", "momentum", "seed",
            "limit");

    /** The deadline of meeting and of every call when the config gives none. */
    public static final long DEFAULT_TIMEOUT_SECONDS = 300;

    /** Checks that the fields agree. */
    public ParameterServerConfig {
        Objects.requireNonNull(training, "training");
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(clusterHost, "clusterHost");
        Objects.requireNonNull(clusterSeed, "clusterSeed");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(secret, "secret");
        if (worldSize < 2) {
            throw new IllegalArgumentException("worldSize " + worldSize + " leaves no trainer: the parameter server is"
                    + " rank 0 and the trainers ranks 1 to worldSize - 1, so worldSize must be 2 or more");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, worldSize " + worldSize + ")");
        }
        if (training.batchSize() < worldSize - 1) {
            throw new IllegalArgumentException("batchSize " + training.batchSize() + " is smaller than the "
                    + (worldSize - 1) + " trainers: every trainer needs at least one image per step");
        }
    }

    /**
     * Reads a verticle config, with {@code env} ({@code RANK}, {@code WORLD_SIZE}, {@code MASTER_PORT},
     * {@code LOCAL_WORLD_SIZE}, the job's secret) filling in what it leaves out.
     *
     * @throws IllegalArgumentException naming the field (or variable) that is wrong and what it allows
     */
    public static ParameterServerConfig fromJson(JsonObject config, Map<String, String> env) {
        ConfigFields f = new ConfigFields(config == null ? new JsonObject() : config, env, FIELDS);
        int worldSize = f.integer("worldSize", "WORLD_SIZE", 2, 2, 1 << 16);
        int rank = f.integer("rank", "RANK", 0, 0, worldSize - 1);
        int masterPort = ConfigFields.environmentInteger(env, "MASTER_PORT", -1, 1,
                65535 - HazelcastCluster.PORT_COUNT);
        String cluster = f.text("cluster", masterPort < 0 ? null : "tensorbus-ps-" + masterPort);
        int clusterPort = f.integer("clusterPort", null, masterPort < 0 ? -1 : masterPort + 1, 1,
                65535 - HazelcastCluster.PORT_COUNT + 1);
        if (cluster == null || clusterPort < 0) {
            throw new IllegalArgumentException("config fields 'cluster' and 'clusterPort' are required outside a job"
                    + " of tensorbus launch (which sets MASTER_PORT): the Hazelcast cluster's name and the first of"
                    + " its " + HazelcastCluster.PORT_COUNT + " loopback ports");
        }
        String master = env.get("MASTER_ADDR");
        boolean launched = master != null && !master.isBlank();
        String clusterHost = f.text("clusterHost", null);
        if (clusterHost == null) {
            clusterHost = launched ? AdvertisedHost.choose(null, env, "0.0.0.0", master.trim(),
                    ParameterServerWorker.workerName(rank)) : "127.0.0.1";
        }
        return new ParameterServerConfig(f.training(), rank, worldSize, cluster, clusterHost,
                f.textOrEnv("clusterSeed", "MASTER_ADDR", clusterHost), clusterPort,
                Duration.ofSeconds(f.integer("timeoutSeconds", null, DEFAULT_TIMEOUT_SECONDS, 1, Integer.MAX_VALUE)),
                f.integer("threads", null, ConfigFields.defaultThreads(env), 0, 4096), JobSecret.fromEnvironment(env));
    }

    /** The number of trainers: every worker but the server. */
    public int trainers() {
        return worldSize - 1;
    }

    /** The images of one trainer's step: the global batch divided among the trainers (rounded down). */
    public int perTrainerBatch() {
        return training.batchSize() / trainers();
    }

    /** True for the parameter server, rank 0. */
    public boolean isServer() {
        return rank == 0;
    }
}
