package io.tensorbus.workloads.pipeline;

import io.tensorbus.workloads.cli.Launcher;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code tensorbus run pipeline-resnet50 [--micro-batches 1,2,4,8] [--batch B] [--img PX] [--batches N]
 * [--schedule gpipe|1f1b]}: starts the master and the two shard workers of {@link PipelineResNet50} as three JVMs
 * through {@code tensorbus launch}.
 */
public final class PipelineResNet50Command {
    /** The workload's name on the command line. */
    public static final String NAME = "pipeline-resnet50";

    /** The usage of its options. */
    public static final String USAGE = NAME + " " + PipelineOptions.USAGE;

    private PipelineResNet50Command() {
    }

    /**
     * Runs the workload with {@code args} (the options after its name).
     *
     * @return the launcher's exit status: 0 when all three processes succeeded
     * @throws IllegalArgumentException for bad options (the caller prints the usage)
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        PipelineOptions.parse(args);
        List<String> launch = new ArrayList<>(List.of("--nproc-per-node",
                Integer.toString(PipelineResNet50.NAMES.size()), PipelineResNet50.class.getName()));
        launch.addAll(args);
        return Launcher.run(launch, out, err);
    }
}
