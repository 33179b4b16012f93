package io.tensorbus.workloads.cli;

import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;

/**
 * Where the commands of one {@code tensorbus} command line write, and the environment they read: the process's
 * own, or a test's.
 *
 * @param out standard output
 * @param err messages and errors
 * @param env the environment variables ({@code RANK} makes a workload run one rank of a launched job)
 */
public record Console(PrintStream out, PrintStream err, Map<String, String> env) {
    /** Checks that every part is present. */
    public Console {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
        env = Map.copyOf(env);
    }
}
