package io.tensorbus.workloads.pipeline;

import io.tensorbus.workloads.demo.ConfigFields;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The settings of one process of the pipeline ResNet50 workload as a verticle, read from its JSON config with
 * the environment of {@code tensorbus launch} as defaults: {@code rank} ({@code RANK}; 0 is the master),
 * {@code worldSize} ({@code WORLD_SIZE}, which must be 3), {@code initMethod} (default {@code env://}: the
 * launcher's MASTER_ADDR and MASTER_PORT; or {@code tcp://host:port}, {@code file:///path}), and the workload's
 * options {@code microBatches} (an array, or a string {@code "1,2,4,8"}), {@code batch}, {@code img},
 * {@code batches} and {@code schedule} ({@code "gpipe"} or {@code "1f1b"}), with {@link PipelineOptions}'s
 * defaults.
 *
 * @param rank this process's rank
 * @param worldSize the number of processes
 * @param initMethod how the processes meet
 * @param options the workload's options
 */
public record PipelineConfig(int rank, int worldSize, String initMethod, PipelineOptions options) {
    /** The config fields, in the order the error messages list them. */
    public static final List<String> FIELDS = List.of("rank", "worldSize", "initMethod", "microBatches", "batch",
            "img", "batches", "schedule");

    /**
     * Reads a verticle config.
     *
     * @throws IllegalArgumentException naming the field that is wrong and what it allows
     */
    public static PipelineConfig fromJson(JsonObject json, Map<String, String> env) {
        JsonObject config = json == null ? new JsonObject() : json;
        ConfigFields f = new ConfigFields(config, env, FIELDS);
        int world = PipelineResNet50.NAMES.size();
        int worldSize = f.integer("worldSize", "WORLD_SIZE", world, world, world);
        int rank = f.integer("rank", "RANK", 0, 0, worldSize - 1);
        List<String> args = new ArrayList<>();
        Object micro = config.getValue("microBatches");
        if (micro instanceof JsonArray a) {
            args.addAll(List.of("--micro-batches", String.join(",", a.stream().map(String::valueOf).toList())));
        } else if (micro != null) {
            args.addAll(List.of("--micro-batches", String.valueOf(micro)));
        }
        for (String key : List.of("batch", "img", "batches", "schedule")) {
            if (config.getValue(key) != null) {
                args.addAll(List.of("--" + key, String.valueOf(config.getValue(key))));
            }
        }
        try {
            return new PipelineConfig(rank, worldSize, f.text("initMethod", "env://"), PipelineOptions.parse(args));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("config " + e.getMessage().replace("--micro-batches", "'microBatches'")
                    .replaceAll("--(batch|img|batches|schedule)\\b", "'$1'"), e);
        }
    }
}
