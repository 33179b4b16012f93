package io.tensorbus.workloads.ddp;

import io.tensorbus.Device;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.HashStore;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of one rank of the DDP Fashion-MNIST workload, read from the verticle's JSON config with the
 * environment of {@code tensorbus launch} (torchrun's variables) as defaults:
 *
 * <table>
 *   <caption>config fields</caption>
 *   <tr><th>field</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code rank}</td><td>{@code RANK}, else 0</td><td>this process's rank</td></tr>
 *   <tr><td>{@code worldSize}</td><td>{@code WORLD_SIZE}, else 1</td><td>the number of processes</td></tr>
 *   <tr><td>{@code masterAddr}</td><td>{@code MASTER_ADDR}, else 127.0.0.1</td><td>host of the rendezvous
 * store</td></tr>   <tr><td>{@code masterPort}</td><td>{@code MASTER_PORT}; required for worldSize &gt; 1 without
 * initMethod</td>       <td>its port (rank 0 hosts it unless {@code tensorbus launch} does)</td></tr>
 *   <tr><td>{@code initMethod}</td><td>none</td><td>{@code tcp://host:port}, {@code file:///path} or
 *       {@code env://}, instead of masterAddr/masterPort</td></tr>
 *   <tr><td>{@code device}</td><td>cpu</td><td>where the model trains: cpu, opencl[:N], cuda[:N] (cuda means
 *       cuda:LOCAL_RANK)</td></tr>
 *   <tr><td>{@code backend}</td><td>tcp, opencl for OpenCL devices, nccl for CUDA</td><td>the process-group
 *       backend</td></tr>
 *   <tr><td>{@code timeoutSeconds}</td><td>1800</td><td>deadline of the set-up and of every collective</td></tr>
 *   <tr><td>{@code threads}</td><td>cores / {@code LOCAL_WORLD_SIZE}, else unchanged</td><td>compute threads</td></tr>
 *   <tr><td>{@code epochs}</td><td>5</td><td>passes over the training data</td></tr>
 *   <tr><td>{@code dataDir}</td><td>embedded subset</td><td>a Fashion-MNIST directory</td></tr>
 *   <tr><td>{@code batchSize}</td><td>128</td><td>the global batch; each rank takes batchSize / worldSize</td></tr>
 *   <tr><td>{@code lr}, {@code momentum}</td><td>0.01, 0.5</td><td>SGD's settings</td></tr>
 *   <tr><td>{@code seed}</td><td>1234</td><td>initial weights, dropout and shuffling</td></tr>
 *   <tr><td>{@code limit}</td><td>0 (all)</td><td>training images per epoch</td></tr>
 *   <tr><td>{@code commHook}</td><td>allreduce</td><td>DDP's communication hook: allreduce, fp16, bf16 or
 *       powersgd</td></tr>
 *   <tr><td>{@code powerSgdRank}, {@code powerSgdStart}</td><td>1, 10</td><td>PowerSGD's rank and first
 *       compressed step</td></tr>
 *   <tr><td>{@code checkpointDir}</td><td>none</td><td>where the model and optimizer are saved after every epoch
 *       and resumed from</td></tr>
 * </table>
 *
 * @param training the hyper-parameters and data, as the local demo's
 * @param rank this process's rank, in {@code [0, worldSize)}
 * @param worldSize the number of processes
 * @param initMethod an init method URL, or null to rendezvous at masterAddr:masterPort
 * @param masterAddr the rendezvous host
 * @param masterPort the rendezvous port, or -1 for a world of one that needs none
 * @param storeHosted true when a launcher hosts the store at masterAddr:masterPort, so that rank 0 joins it
 *     as a client ({@code TENSORBUS_STORE_HOSTED=1}, which holds only while the port is the launcher's)
 * @param backend the process-group backend's name
 * @param timeout the deadline of the set-up and of every operation of the group
 * @param threads the compute threads to use, or 0 to leave the count as it is
 * @param secret the job's secret, from {@code TENSORBUS_SECRET} or {@code TENSORBUS_SECRET_FILE} (which
 *     {@code tensorbus launch} sets), else none
 * @param commHook the communication hook DDP uses
 * @param checkpointDir where checkpoints are saved and resumed from, or null
 */
public record DdpConfig(FashionMnistTraining.Options training, int rank, int worldSize, String initMethod,
        String masterAddr, int masterPort, boolean storeHosted, String backend, Duration timeout, int threads,
        JobSecret secret, CommHookChoice commHook, Path checkpointDir) {

    /** The config fields, in the order the error messages list them. */
    public static final List<String> FIELDS = List.of("rank", "worldSize", "masterAddr", "masterPort", "initMethod",
            "backend", "timeoutSeconds", "threads", "epochs", "dataDir", "batchSize", "lr", "momentum", "seed",
            "limit", "commHook", "powerSgdRank", "powerSgdStart", "checkpointDir", "device");

    private static final long DEFAULT_TIMEOUT_SECONDS = Distributed.DEFAULT_TIMEOUT.toSeconds();

    /** Checks that the fields agree. */
    public DdpConfig {
        Objects.requireNonNull(training, "training");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(secret, "secret");
        Objects.requireNonNull(commHook, "commHook");
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, worldSize " + worldSize + ")");
        }
        if (training.batchSize() < worldSize) {
            throw new IllegalArgumentException("batchSize " + training.batchSize() + " is smaller than worldSize "
                    + worldSize + ": every rank needs at least one image per step");
        }
    }

    /**
     * Reads a verticle config, with {@code env} ({@code RANK}, {@code WORLD_SIZE}, {@code MASTER_ADDR},
     * {@code MASTER_PORT}, {@code LOCAL_WORLD_SIZE}, {@code TENSORBUS_STORE_HOSTED}, the job's secret) filling in
     * what it leaves out.
     *
     * @throws IllegalArgumentException naming the field (or variable) that is wrong and what it allows, or an
     *     unusable secret
     */
    public static DdpConfig fromJson(JsonObject config, Map<String, String> env) {
        ConfigFields f = new ConfigFields(config == null ? new JsonObject() : config, env, FIELDS);
        int worldSize = f.integer("worldSize", "WORLD_SIZE", 1, 1, 1 << 20);
        int rank = f.integer("rank", "RANK", 0, 0, worldSize - 1);
        String initMethod = f.text("initMethod", null);
        boolean addressGiven = config != null && (config.containsKey("masterAddr") || config.containsKey("masterPort"));
        if (initMethod != null && addressGiven) {
            throw new IllegalArgumentException("config fields 'initMethod' and 'masterAddr'/'masterPort' exclude each"
                    + " other: give one way to meet the other ranks");
        }
        String masterAddr = f.textOrEnv("masterAddr", "MASTER_ADDR", "127.0.0.1");
        int masterPort = f.integer("masterPort", "MASTER_PORT", -1, 0, 65535);
        if (masterPort < 0 && initMethod == null && worldSize > 1) {
            throw new IllegalArgumentException("config field 'masterPort' (or MASTER_PORT, or 'initMethod') is required"
                    + " for worldSize " + worldSize + ": the port of the rendezvous store, 1 to 65535");
        }
        // The launcher's store listens at MASTER_PORT only: a port from the config is another store.
        boolean hosted = "1".equals(env.get("TENSORBUS_STORE_HOSTED")) && !addressGiven;
        FashionMnistTraining.Options training = f.training();
        int localRank = ConfigFields.environmentInteger(env, "LOCAL_RANK", 0, 0, 1 << 20);
        Device device = FashionMnistTraining.placed(training.device(), localRank);
        return new DdpConfig(training.onDevice(device), rank, worldSize, initMethod, masterAddr, masterPort, hosted,
                f.text("backend", backendFor(device)), Duration.ofSeconds(f.integer("timeoutSeconds", null,
                DEFAULT_TIMEOUT_SECONDS, 1, Integer.MAX_VALUE)),
                f.integer("threads", null, ConfigFields.defaultThreads(env), 0, 4096), JobSecret.fromEnvironment(env),
                new CommHookChoice(f.text("commHook", "allreduce"), f.integer("powerSgdRank", null, 1, 1, 1 << 16),
                        f.integer("powerSgdStart", null, 10, 2, Integer.MAX_VALUE)),
                checkpointDir(f.text("checkpointDir", null)));
    }

    /**
     * The backend of {@code device}'s tensors: opencl for OpenCL devices, nccl for CUDA, else tcp (the host, and
     * any other device type, whose buffers tcp stages).
     */
    public static String backendFor(Device device) {
        return switch (device.type()) {
            case "opencl" -> "opencl";
            case "cuda" -> "nccl";
            default -> "tcp";
        };
    }

    private static Path checkpointDir(String dir) {
        if (dir != null && dir.isBlank()) {
            throw new IllegalArgumentException("config field 'checkpointDir' must be a directory, got ''");
        }
        return dir == null ? null : Path.of(dir);
    }

    /** The images each rank takes per step: the global batch divided among the ranks (rounded down). */
    public int perRankBatch() {
        return training.batchSize() / worldSize;
    }

    /**
     * The arguments of {@code Distributed.initProcessGroup}: the init method if given; for a world of one
     * without a port, an in-process store (nothing to meet); else {@code tcp://masterAddr:masterPort}.
     *
     * @param vertx the instance the group runs on (a verticle's own), or null for one the group creates and closes
     */
    public InitOptions initOptions(Vertx vertx) {
        InitOptions.Builder b = InitOptions.builder().rank(rank).worldSize(worldSize).backend(backend).timeout(timeout)
                .secret(secret);
        if (!training.device().isCpu()) {
            b.deviceId(training.device());
        }
        if (vertx != null) {
            b.vertx(vertx);
        }
        if (initMethod != null) {
            return b.initMethod(initMethod).build();
        }
        if (masterPort < 0) {
            return b.store(new HashStore(timeout)).build();
        }
        String host = masterAddr.contains(":") ? "[" + masterAddr + "]" : masterAddr;
        return b.initMethod("tcp://" + host + ":" + masterPort)
                .environment(storeHosted ? Map.of("TENSORBUS_STORE_HOSTED", "1") : Map.of()).build();
    }
}
