package io.tensorbus.workloads.pipeline;

import io.tensorbus.distributed.pipeline.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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
 */
public record PipelineOptions(List<Integer> microBatches, int batch, int img, int batches, Pipeline.Schedule schedule,
        int numClasses, long seed) {
    /** The usage of the options. */
    public static final String USAGE = "[--micro-batches 1,2,4,8] [--batch B] [--img PX] [--batches N]"
            + " [--schedule gpipe|1f1b]";

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

    /** The anchor's defaults: micro-batches 1, 2, 4, 8; batch 32 of 64x64 images; 3 batches; GPipe. */
    public static PipelineOptions defaults() {
        return new PipelineOptions(List.of(1, 2, 4, 8), 32, 64, 3, Pipeline.Schedule.GPIPE, 1000, 0);
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
        PipelineOptions d = defaults();
        List<Integer> micro = d.microBatches();
        int batch = d.batch();
        int img = d.img();
        int batches = d.batches();
        Pipeline.Schedule schedule = d.schedule();
        for (int i = 0; i < args.size(); i += 2) {
            String option = args.get(i);
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value; usage: " + USAGE);
            }
            String value = args.get(i + 1);
            switch (option) {
                case "--micro-batches" -> micro = counts(value);
                case "--batch" -> batch = whole(option, value);
                case "--img" -> img = whole(option, value);
                case "--batches" -> batches = whole(option, value);
                case "--schedule" -> schedule = schedule(value);
                default -> throw new IllegalArgumentException("unknown option " + option + "; usage: " + USAGE);
            }
        }
        return new PipelineOptions(micro, batch, img, batches, schedule, d.numClasses(), d.seed());
    }

    private static List<Integer> counts(String value) {
        List<Integer> counts = new ArrayList<>();
        for (String part : value.split(",")) {
            counts.add(whole("--micro-batches", part));
        }
        return counts;
    }

    private static int whole(String option, String value) {
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Reported below with what is allowed.
        }
        throw new IllegalArgumentException(option + " needs a whole number >= 1, got '" + value + "'");
    }

    private static Pipeline.Schedule schedule(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "gpipe" -> Pipeline.Schedule.GPIPE;
            case "1f1b" -> Pipeline.Schedule.ONE_F_ONE_B;
            default -> throw new IllegalArgumentException("--schedule is gpipe or 1f1b, got '" + value + "'");
        };
    }
}
