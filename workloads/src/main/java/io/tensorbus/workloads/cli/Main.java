package io.tensorbus.workloads.cli;

import java.io.PrintStream;

/**
 * The {@code tensorbus} command line (run by the {@code ./tensorbus} script): {@code info},
 * {@code bench SUITE [--json FILE]}, {@code run WORKLOAD [options]}, {@code launch ...} ({@link Launcher}),
 * {@code fr-trace DIR}, {@code timeline DIR} and {@code secret}, declared by {@link TensorbusCommand}.
 * {@code --help} (or {@code -h}) after any command or workload prints its usage and exits 0; bad usage prints the
 * reason and where the usage is, and exits with status {@link Cli#USAGE}.
 */
public final class Main {
    private Main() {
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command with {@code args}, writing to {@code out} and {@code err}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return TensorbusCommand.execute(new Console(out, err, System.getenv()), args);
    }
}
