package io.tensorbus.workloads.serve;

import io.tensorbus.workloads.cli.Cli;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.RunCommand;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code tensorbus run train-then-serve [--nproc N] [--port P] [--serve-seconds S] [--epochs E] [--data DIR]
 * [--seed S] [--limit N]}: {@link TrainThenServe}, then serves until interrupted or for S seconds.
 */
@Command(name = TrainThenServeCommand.NAME, description = {"train the Fashion-MNIST network with DDP, then classify"
    + " images POSTed to http://127.0.0.1:PORT/classify through a serving worker on the event bus"})
public final class TrainThenServeCommand extends FashionMnistTraining.Flags implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "train-then-serve";

    @Mixin
    private HelpOption help;
    @ParentCommand
    private RunCommand run;
    @Option(names = "--nproc", paramLabel = "N", description = "training ranks, threads of this JVM (default: 2)")
    private int nproc = 2;
    @Option(names = "--port", paramLabel = "P", description = "the HTTP port on 127.0.0.1, 0 for a free one"
            + " (default: 8080)")
    private int port = 8080;
    @Option(names = "--serve-seconds", paramLabel = "S", description = "stop serving after S seconds (default: 0,"
            + " until interrupted)")
    private long serveSeconds;

    @Override
    public Integer call() throws Exception {
        PrintStream out = run.console().out();
        int n = Cli.range("--nproc", nproc, 1, 64);
        int p = Cli.range("--port", port, 0, 65535);
        try (TrainThenServe serving = TrainThenServe.start(options(), n, "127.0.0.1", p, out)) {
            out.println("serving at http://127.0.0.1:" + serving.port() + "/classify (POST N x 784 bytes of 8-bit"
                    + " 28 x 28 images); metrics at http://127.0.0.1:" + serving.port() + "/metrics");
            out.flush();
            if (serveSeconds > 0) {
                Thread.sleep(serveSeconds * 1000);
            } else {
                Thread.currentThread().join();
            }
        }
        return 0;
    }
}
