package io.tensorbus.workloads.cli;

import io.tensorbus.workloads.ddp.DdpFashionMnistCommand;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.pipeline.PipelineResNet50Command;
import io.tensorbus.workloads.ps.ParameterServerCommand;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code tensorbus run WORKLOAD [options]}: runs one of the workloads. */
@Command(name = "run", synopsisSubcommandLabel = "WORKLOAD", description = "run a workload",
        subcommands = {DdpFashionMnistCommand.class, ParameterServerCommand.class, PipelineResNet50Command.class,
            FashionMnistTraining.LocalDemo.class})
public final class RunCommand implements Callable<Integer> {
    @ParentCommand
    private TensorbusCommand root;
    @Spec
    private CommandSpec spec;
    @Mixin
    private HelpOption help;

    /** Where the workloads write, and the environment they read. */
    public Console console() {
        return root.console();
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "run needs a workload");
    }
}
