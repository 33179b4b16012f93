package io.tensorbus.workloads.interop;

import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.workloads.cli.Cli;
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
 * {@code tensorbus run pytorch-feeder --rank 0 --world-size 2 [--init-method URL] [--batches N] [--batch-size B]
 * [--data DIR]}: rank 0 of a job with examples/pytorch/consumer.py, sending it training batches ({@link BatchFeeder}).
 */
@Command(name = BatchFeederCommand.NAME, description = {"host a gloo job with a PyTorch trainer as rank 1 and send"
    + " it Fashion-MNIST training batches by send"})
public final class BatchFeederCommand implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "pytorch-feeder";

    @Mixin
    private HelpOption help;
    @Mixin
    private PyTorchJobOptions job;
    @ParentCommand
    private RunCommand run;
    @Option(names = "--batches", paramLabel = "N", description = "batches to send (default: 300)")
    private int batches = 300;
    @Option(names = "--batch-size", paramLabel = "B", description = "images per batch (default: 64)")
    private int batchSize = 64;
    @Option(names = "--data", paramLabel = "DIR", description = "Fashion-MNIST files (default: the 10,000 training"
            + " images embedded in tensorbus)")
    private Path data;

    @Override
    public Integer call() throws Exception {
        PrintStream out = run.console().out();
        int n = Cli.range("--batches", batches, 1, 1_000_000);
        int b = Cli.range("--batch-size", batchSize, 1, 65_536);
        FashionMnist train = data == null ? FashionMnist.embedded(true) : FashionMnist.load(data, true);
        try (ProcessGroup pg = job.join()) {
            BatchFeeder.run(pg, train, n, b, out);
        }
        return 0;
    }
}
