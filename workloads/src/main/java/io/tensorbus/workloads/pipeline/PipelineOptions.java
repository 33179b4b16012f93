package io.tensorbus.workloads.pipeline;

import io.tensorbus.distributed.pipeline.Pipeline;
import io.tensorbus.workloads.cli.Cli;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options of the pipeline ResNet50 workload, defaults sized for two cores (the anchor's batch 32 at 64x64;
 * the seed's batch 120 at 128x128 runs with {@code --batch 120 --img 128}).
 *
 * @param microBatches the micro-batch counts to time, in order (the seed's {@code num_split}; there a chunk size
 *     passed to {@code split}, here the number of micro-batches, as the anchor computes it)
 * @param batch images per batch
 * @param img the images' height and width in pixels
 * @param batches timed batches per micro-batch count (the fastest is reported)
 * @param schedule GPipe (the seed's) or 1F1B
 * @param numClasses the classifier's outputs (the seed's 1000)
 * @param seed the weights, images and labels
 * @param balanceByTime true to cut the model where the two shards take about as long ({@code Balance.byTime}), false
 *     for the seed's cut after layer2
 */
public record PipelineOptions(List<Integer> microBatches, int batch, int img, int batches, Pipeline.Schedule schedule,
        int numClasses, long seed, boolean balanceByTime) {
    /** Checks the values. */
    public PipelineOptions {
        microBatches = List.copyOf(microBatches);
        if (microBatches.isEmpty() || microBatches.stream().anyMatch(m -> m < 1 || m > batch)) {
            throw new IllegalArgumentException("--micro-batches must list counts from 1 to the batch size " + batch
                    + ", got " + microBatches);
        }
        if (img < 32) {
            throw new IllegalArgumentException("--img must be 32 or more (ResNet50 halves it five times), got " + img);
        }
    }

    /**
     * The anchor's defaults: micro-batches 1, 2, 4, 8; batch 32 of 64x64 images; 3 batches; GPipe; the shards cut by
     * time.
     */
    public static PipelineOptions defaults() {
        return new PipelineOptions(List.of(1, 2, 4, 8), 32, 64, 3, Pipeline.Schedule.GPIPE, 1000, 0, true);
    }

    /** {@code time} or {@code seed}, as {@code --balance} takes it. */
    public String balanceName() {
        return balanceByTime ? "time" : "seed";
    }

    /** {@code gpipe} or {@code 1f1b}. */
    public String scheduleName() {
        return schedule == Pipeline.Schedule.GPIPE ? "gpipe" : "1f1b";
    }

    /**
     * Parses the options.
     *
     * @throws IllegalArgumentException naming the option that is wrong and what it allows
     */
    public static PipelineOptions parse(List<String> args) {
        return Cli.parse(new Flags(), args).options();
    }



    /** The arguments that give these options but the schedule (what the bench passes to each run). */
    public List<String> toArgs() {
        return List.of("--micro-batches", microBatches.stream().map(String::valueOf).collect(Collectors.joining(",")),
                "--batch", Integer.toString(batch), "--img", Integer.toString(img), "--batches",
                Integer.toString(batches), "--balance", balanceName());
    }

    /** The options of a run's shape, as the workload and the bench suite declare them. */
    public static final class Shape {
        @Option(names = "--micro-batches", paramLabel = "LIST", split = ",",
                description = "micro-batch counts to time, each 1 to the batch size (default: 1,2,4,8)")
        List<Integer> microBatches = List.of(1, 2, 4, 8);
        @Option(names = "--batch", paramLabel = "B", description = "images per batch (default: ${DEFAULT-VALUE})")
        int batch = 32;
        @Option(names = "--img", paramLabel = "PX",
                description = "the images' height and width, at least 32 (default: ${DEFAULT-VALUE})")
        int img = 64;
        @Option(names = "--batches", paramLabel = "N",
                description = "timed batches per count; the fastest is reported (default: ${DEFAULT-VALUE})")
        int batches = 3;
        @Option(names = "--balance", paramLabel = "CUT", description = {"where the model is cut into the two shards:"
            + " time (where they take about as long, measured first) or seed (after layer2, as the seed)"
            + " (default: ${DEFAULT-VALUE})"})
        String balance = "time";

        /**
         * These options under {@code schedule}.
         *
         * @throws IllegalArgumentException for a value out of range, naming the option
         */
        PipelineOptions options(Pipeline.Schedule schedule) {
            PipelineOptions d = defaults();
            if (!List.of("time", "seed").contains(balance)) {
                throw new IllegalArgumentException("--balance must be time or seed, got '" + balance + "'");
            }
            return new PipelineOptions(microBatches, Cli.range("--batch", batch, 1, Integer.MAX_VALUE), img,
                    Cli.range("--batches", batches, 1, Integer.MAX_VALUE), schedule, d.numClasses(), d.seed(),
                    balance.equals("time"));
        }

        /** The arguments that give these options. */
        public List<String> toArgs() {
            return options(Pipeline.Schedule.GPIPE).toArgs();
        }
    }

    /** The workload's options: the shape and the schedule. */
    public static class Flags {
        @Mixin
        Shape shape = new Shape();
        @Option(names = "--schedule", paramLabel = "S", description = "gpipe or 1f1b (default: ${DEFAULT-VALUE})")
        String schedule = "gpipe";

        /** The options given. */
        public PipelineOptions options() {
            return shape.options(schedule(schedule));
        }
    }

    private static Pipeline.Schedule schedule(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "gpipe" -> Pipeline.Schedule.GPIPE;
            case "1f1b" -> Pipeline.Schedule.ONE_F_ONE_B;
            default -> throw new IllegalArgumentException("--schedule is gpipe or 1f1b, got '" + value + "'");
        };
    }
}
