package io.tensorbus.workloads.pipeline;

import io.tensorbus.workloads.cli.Console;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.LaunchOptions;
import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.cli.RunCommand;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code tensorbus run pipeline-resnet50 [--micro-batches 1,2,4,8] [--batch B] [--img PX] [--batches N]
 * [--schedule gpipe|1f1b] [--ranks-as-threads]}: starts the master and the two shard workers of
 * {@link PipelineResNet50} as three JVMs through {@code tensorbus launch}, or with {@code --ranks-as-threads} as three
 * rank threads of one JVM.
 */
@Command(name = PipelineResNet50Command.NAME, description = {"the seed's ResNet50 in two shards over RPC, a master"
    + " and two workers as three processes; seconds per batch for each micro-batch count"})
public final class PipelineResNet50Command extends PipelineOptions.Flags implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "pipeline-resnet50";

    @ParentCommand
    private RunCommand run;
    @Mixin
    private HelpOption help;
    @Option(names = "--ranks-as-threads", description = {"run the master and the shards as threads of one JVM, which"
        + " compiles each kernel once for all of them, instead of one process each"})
    private boolean ranksAsThreads;

    @Override
    public Integer call() {
        Console console = run.console();
        return run(options(), ranksAsThreads, console.out(), console.err());
    }

    /**
     * Runs the workload with {@code args} (the options after its name).
     *
     * @return the launcher's exit status: 0 when all three processes succeeded
     * @throws IllegalArgumentException for bad options (the caller prints the usage)
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        return run(PipelineOptions.parse(args), false, out, err);
    }

    private static int run(PipelineOptions options, boolean ranksAsThreads, PrintStream out, PrintStream err) {
        List<String> target = new ArrayList<>(List.of(PipelineResNet50.class.getName()));
        target.addAll(options.toArgs());
        target.addAll(List.of("--schedule", options.scheduleName()));
        return Launcher.run(LaunchOptions.jobArgs(PipelineResNet50.NAMES.size(), ranksAsThreads, target), out, err);
    }
}
