package io.tensorbus.workloads.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A command that holds others ({@code bench} its suites, {@code run} its workloads): it gives them the command
 * line's {@link Console} and, run without one of them, is a usage error.
 */
abstract class CommandGroup implements Callable<Integer> {
    @ParentCommand
    private TensorbusCommand root;
    @Spec
    private CommandSpec spec;
    @Mixin
    private HelpOption help;

    /** Where the commands of this group write, and the environment they read. */
    public Console console() {
        return root.console();
    }

    /** What is missing when none is named: "a suite", "a workload". */
    abstract String member();

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), spec.name() + " needs " + member());
    }
}
