package io.tensorbus.workloads.bench;

import io.tensorbus.workloads.pipeline.PipelineOptions;
import io.tensorbus.workloads.pipeline.PipelineResNet50;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code tensorbus bench pipeline [--batch B] [--img PX] [--batches N] [--micro-batches 1,2,4,8]}: the seed's
 * pipeline-parallel ResNet50 ({@link PipelineResNet50}, a master and two shard workers as three JVMs) as
 * {@code tools/anchors/torch_pipeline.py BATCH IMG NUM_BATCHES} runs it, under the GPipe schedule and then
 * 1F1B: {@code pipeline gpipe batch=32 img=64 micro_batches=M s_per_batch=T} and {@code pipeline 1f1b ...}, the
 * fastest of the timed batches for each micro-batch count.
 */
public final class PipelineBench {
    private final List<String> args;

    /**
     * A run with the workload's options (all but {@code --schedule}, which the suite sets).
     *
     * @throws IllegalArgumentException for bad options, naming what is allowed
     */
    public PipelineBench(List<String> args) {
        if (args.contains("--schedule")) {
            throw new IllegalArgumentException("the pipeline suite runs both schedules; leave --schedule out");
        }
        PipelineOptions.parse(args);
        this.args = List.copyOf(Objects.requireNonNull(args, "args"));
    }

    /** Runs the job under each schedule; returns the first failing launcher status, or 0. */
    public int run(Consumer<Measurement> sink, PrintStream err) {
        for (String schedule : List.of("gpipe", "1f1b")) {
            List<String> workerArgs = new ArrayList<>(args);
            workerArgs.addAll(List.of("--schedule", schedule));
            int status = MultiProcessBench.launch("pipeline", PipelineResNet50.class, 3, workerArgs, sink, err);
            if (status != 0) {
                return status;
            }
        }
        return 0;
    }

    /** {@code tensorbus bench pipeline}: the workload's options but {@code --schedule}, and the run. */
    @Command(name = "pipeline", description = "the pipeline-parallel ResNet50 of three processes under GPipe, then"
            + " 1F1B: seconds per batch for each micro-batch count (the anchor torch_pipeline.py)")
    public static final class Suite extends BenchSuite {
        @Mixin
        PipelineOptions.Shape shape;

        @Override
        protected IntSupplier suite(Consumer<Measurement> sink, PrintStream err) {
            PipelineBench bench = new PipelineBench(shape.toArgs());
            return () -> bench.run(sink, err);
        }
    }
}
