package io.tensorbus.workloads.interop;

import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.RunCommand;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code tensorbus run pytorch-evaluator --rank R --world-size W [--init-method URL] [--data DIR]}: a JVM rank of
 * the job examples/pytorch/trainer.py starts ({@link PyTorchEvaluator}).
 */
@Command(name = PyTorchEvaluatorCommand.NAME, description = {"join a PyTorch trainer's gloo job: receive its"
    + " weights by broadcast, score them on Fashion-MNIST test images, answer by all-reduce"})
public final class PyTorchEvaluatorCommand implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "pytorch-evaluator";

    @Mixin
    private HelpOption help;
    @Mixin
    private PyTorchJobOptions job;
    @ParentCommand
    private RunCommand run;
    @Option(names = "--data", paramLabel = "DIR", description = "Fashion-MNIST files (default: the 1,000 test"
            + " images embedded in tensorbus)")
    private Path data;

    @Override
    public Integer call() throws Exception {
        PrintStream out = run.console().out();
        FashionMnist test = data == null ? FashionMnist.embedded(false) : FashionMnist.load(data, false);
        try (ProcessGroup pg = job.join()) {
            PyTorchEvaluator.run(pg, test, out);
        }
        return 0;
    }
}
