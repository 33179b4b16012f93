package io.tensorbus.workloads.cli;

import io.tensorbus.workloads.ddp.DdpFashionMnistCommand;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.interop.BatchFeederCommand;
import io.tensorbus.workloads.interop.PyTorchEvaluatorCommand;
import io.tensorbus.workloads.pipeline.PipelineResNet50Command;
import io.tensorbus.workloads.ps.ParameterServerCommand;
import io.tensorbus.workloads.serve.TrainThenServeCommand;
import picocli.CommandLine.Command;

/** {@code tensorbus run WORKLOAD [options]}: runs one of the workloads. */
@Command(name = "run", synopsisSubcommandLabel = "WORKLOAD", description = "run a workload",
        subcommands = {DdpFashionMnistCommand.class, ParameterServerCommand.class, PipelineResNet50Command.class,
            FashionMnistTraining.LocalDemo.class, TrainThenServeCommand.class, PyTorchEvaluatorCommand.class,
            BatchFeederCommand.class})
public final class RunCommand extends CommandGroup {
    @Override
    String member() {
        return "a workload";
    }
}
