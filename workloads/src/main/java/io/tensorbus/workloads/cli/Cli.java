package io.tensorbus.workloads.cli;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * What every part of the {@code tensorbus} command line shares: its options are declared with picocli's
 * annotations, parsed by {@link #parse}, and checked for range by {@link #range}, so that every command says the
 * same thing of a bad value and {@code --help} is generated from the declarations.
 */
public final class Cli {
    /** Exit status for bad usage, as most Unix tools and picocli. */
    public static final int USAGE = CommandLine.ExitCode.USAGE;
    /** The columns of the help text, as wide as the rest of the project's text. */
    private static final int USAGE_WIDTH = 110;

    private Cli() {
    }

    /**
     * A command whose first positional argument names a program and ends its own options: what follows is that
     * program's, untouched (as {@code tensorbus launch TARGET args}).
     */
    public interface PassesArgumentsOn {
    }

    /**
     * Reads {@code args} into {@code options}, an object whose fields carry picocli's {@code @Option} and
     * {@code @Parameters} (a command of the command line); returns it.
     *
     * @throws IllegalArgumentException naming the option that is unknown, repeated or has a bad value
     */
    public static <T> T parse(T options, List<String> args) {
        try {
            commandLine(options).parseArgs(args.toArray(String[]::new));
            return options;
        } catch (ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** A command line over {@code command} with this project's settings: enum values in any case, no colours. */
    static CommandLine commandLine(Object command) {
        CommandLine cl = new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true)
                .setColorScheme(CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        headings(cl);
        return cl;
    }

    /** The usage of {@code command}'s options as {@code --help} prints it. */
    public static String usage(Object command) {
        return commandLine(command).getUsageMessage();
    }

    /**
     * {@code value} when it lies in {@code [min, max]}.
     *
     * @throws IllegalArgumentException naming {@code option} and the range otherwise
     */
    public static long range(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(option + " must be " + allowed(min, max) + ", got " + value);
        }
        return value;
    }

    /** {@link #range(String, long, long, long)} for an int option. */
    public static int range(String option, int value, int min, int max) {
        return (int) range(option, value, (long) min, max);
    }

    private static String allowed(long min, long max) {
        return max == Integer.MAX_VALUE || max == Long.MAX_VALUE ? "at least " + min : "from " + min + " to " + max;
    }

    /** Lower-case headings on every command, as the rest of the project's messages, and each one's parser. */
    private static void headings(CommandLine cl) {
        CommandSpec spec = cl.getCommandSpec();
        if (spec.userObject() instanceof PassesArgumentsOn) {
            spec.parser().stopAtPositional(true);
        }
        if (spec.userObject() instanceof CommandLine.HelpCommand) {
            // Its header would come before the synopsis, which every other command's help starts with.
            spec.usageMessage().header(new String[0]).description("show the usage of tensorbus or of COMMAND");
        }
        spec.usageMessage().synopsisHeading("usage: ").optionListHeading("options:%n")
                .commandListHeading("commands:%n").parameterListHeading("arguments:%n").sortOptions(false)
                .width(USAGE_WIDTH);
        cl.getSubcommands().values().forEach(Cli::headings);
    }
}
