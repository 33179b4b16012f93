package io.tensorbus.workloads.cli;

import picocli.CommandLine.Option;

/** {@code -h} and {@code --help}, which every command of the command line takes: its usage, and exit status 0. */
public final class HelpOption {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;
}
