package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.FlightRecorderTrace;
import io.tensorbus.distributed.Timeline;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The {@code tensorbus} command: {@code info}, {@code bench SUITE}, {@code run WORKLOAD}, {@code launch},
 * {@code fr-trace DIR}, {@code timeline DIR}, {@code secret} and {@code help}. Every command and workload takes
 * {@code --help}, generated from its options; bad usage prints the reason and where the usage is, and exits with
 * status {@link Cli#USAGE}.
 */
@Command(name = "tensorbus", synopsisSubcommandLabel = "COMMAND",
        description = "PyTorch's torch.distributed for the JVM: benchmarks, workloads and a launcher.",
        subcommands = {BenchCommand.class, RunCommand.class, LaunchFlags.class, CommandLine.HelpCommand.class},
        footer = "'tensorbus COMMAND --help' shows a command's options.")
public final class TensorbusCommand implements Callable<Integer> {
    private final Console console;
    @Spec
    private CommandSpec spec;
    @Mixin
    private HelpOption help;

    /** The command line writing to and reading from {@code console}. */
    public TensorbusCommand(Console console) {
        this.console = console;
    }

    /** Runs {@code args} and returns the exit status. */
    public static int execute(Console console, String... args) {
        if (args.length > 0 && args[0].equals("launch")) {
            // What follows TARGET, or -jar APP.jar, is the program's: the launcher reads its line itself.
            return Launcher.run(List.of(args).subList(1, args.length), console.env(), console.out(), console.err());
        }
        CommandLine cl = Cli.commandLine(new TensorbusCommand(console));
        PrintWriter out = new PrintWriter(console.out(), true);
        cl.setOut(out).setErr(new PrintWriter(console.err(), true));
        cl.setParameterExceptionHandler((e, a) -> {
            String unknown = unknownSubcommand(e);
            return unknown != null ? usageError(console, e.getCommandLine(), unknown, false)
                    : usageError(console, e.getCommandLine(), e.getMessage(), true);
        });
        cl.setExecutionExceptionHandler((e, command, parsed) -> {
            if (e instanceof IllegalArgumentException) {
                return usageError(console, command, e.getMessage(), true);
            }
            throw e;
        });
        int status = cl.execute(args);
        out.flush();
        return status;
    }

    /** Where the commands of this command line write. */
    public Console console() {
        return console;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "no command given");
    }

    @Command(name = "info", description = "JDK, processors, Vector API width, tensorbus version")
    int info(@Mixin HelpOption help) {
        Info.print(console.out());
        return 0;
    }

    @Command(name = "secret", description = "print a new random job secret, for TENSORBUS_SECRET or a file named by"
            + " TENSORBUS_SECRET_FILE (jobs across machines)")
    int secret(@Mixin HelpOption help) {
        console.out().println(JobSecret.newSecretText());
        return 0;
    }

    @Command(name = "fr-trace", description = "read the flight-recorder dumps in DIR (one per rank, written on a"
            + " failure when TENSORBUS_FLIGHT_RECORDER_DIR is set) and name the ranks and the collective where they"
            + " part; exit status 1 when they do")
    int frTrace(@Mixin HelpOption help,
            @Parameters(paramLabel = "DIR", description = "the directory of dumps") Path dir) {
        try {
            FlightRecorderTrace.Report report = FlightRecorderTrace.analyze(dir);
            console.out().println(report.format());
            return report.findings().isEmpty() ? 0 : 1;
        } catch (IOException | IllegalArgumentException e) {
            console.err().println("tensorbus fr-trace: " + e.getMessage());
            return 1;
        }
    }

    @Command(name = "timeline", description = "merge the timelines the ranks wrote to DIR (a job run with"
            + " TENSORBUS_TIMELINE=DIR) into one Trace Event Format file on rank 0's clock, for Perfetto or"
            + " chrome://tracing, and name each collective's straggler")
    int timeline(@Mixin HelpOption help,
            @Parameters(paramLabel = "DIR", description = "the directory of rank_R.json files") Path dir,
            @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "where the merged timeline goes"
                    + " (default DIR/job.json)") Path output) {
        try {
            Timeline.Report report = Timeline.merge(dir, output != null ? output : dir.resolve("job.json"));
            console.out().println(report.format());
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            console.err().println("tensorbus timeline: " + e.getMessage());
            return 1;
        }
    }

    /** "unknown workload 'x'" when {@code e} is about a command, suite or workload that does not exist; else null. */
    private static String unknownSubcommand(ParameterException e) {
        CommandLine cl = e.getCommandLine();
        if (!(e instanceof UnmatchedArgumentException u) || cl.getSubcommands().isEmpty() || u.getUnmatched().isEmpty()
                || cl.getParseResult().subcommand() != null) {
            return null;
        }
        String kind = switch (cl.getCommandName()) {
            case "bench" -> "bench suite";
            case "run" -> "workload";
            default -> "command";
        };
        return "unknown " + kind + " '" + u.getUnmatched().getFirst() + "'";
    }

    /**
     * Prints "tensorbus: [COMMAND: ]PROBLEM" (the command's name when {@code named}) and where the usage is; returns
     * {@link Cli#USAGE}.
     */
    static int usageError(Console console, CommandLine command, String problem, boolean named) {
        String name = command.getCommandSpec().qualifiedName(" ").replaceFirst("^tensorbus ?", "");
        if (name.isEmpty()) {
            console.err().println("tensorbus: " + problem);
            console.err().println("(tensorbus help lists the commands and their options)");
        } else {
            console.err().println("tensorbus: " + (named ? name + ": " : "") + problem);
            console.err().println("(tensorbus " + name + " --help shows its options)");
        }
        return Cli.USAGE;
    }
}
