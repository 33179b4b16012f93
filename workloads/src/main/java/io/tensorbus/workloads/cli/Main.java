package io.tensorbus.workloads.cli;

import io.tensorbus.workloads.bench.Measurement;
import io.tensorbus.workloads.bench.NnBench;
import io.tensorbus.workloads.bench.TensorBench;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The {@code tensorbus} command line (run by the {@code ./tensorbus} script): {@code info},
 * {@code bench SUITE [--json FILE]} and {@code run WORKLOAD [options]}. Bad usage prints the usage and
 * exits with status 2.
 */
public final class Main {
    /** Exit status for bad usage, as most Unix tools. */
    static final int USAGE = 2;

    private static final String USAGE_TEXT = """
            usage: tensorbus COMMAND [options]
              info                         JDK, processors, Vector API width, tensorbus version
              bench SUITE [--json FILE]    run a benchmark suite; one line per measurement
                                           (SUITE NAME key=value ...), also written as JSON to FILE
                                           suites: tensor, nn
              run WORKLOAD [options]       run a workload; workloads:
                                           local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]
              help                         this text""";

    private Main() {
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command with {@code args}, writing to {@code out} and {@code err}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "no command given");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        return switch (args[0]) {
            case "info" -> {
                Info.print(out);
                yield 0;
            }
            case "bench" -> bench(rest, out, err);
            case "run" -> runWorkload(rest, err);
            case "help", "-h", "--help" -> {
                out.println(USAGE_TEXT);
                yield 0;
            }
            default -> usage(err, "unknown command '" + args[0] + "'");
        };
    }

    private static int bench(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "bench needs a suite");
        }
        Path json = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--json") && i + 1 < args.length) {
                json = Path.of(args[++i]);
            } else {
                return usage(err, "bench: unexpected argument '" + args[i] + "'");
            }
        }
        List<Measurement> results = new ArrayList<>();
        Consumer<Measurement> sink = m -> {
            out.println(m.line());
            out.flush();
            results.add(m);
        };
        switch (args[0]) {
            case "tensor" -> new TensorBench().run(sink);
            case "nn" -> new NnBench().run(sink);
            default -> {
                return usage(err, "unknown bench suite '" + args[0] + "'");
            }
        }
        return json == null ? 0 : writeJson(json, results, err);
    }

    private static int writeJson(Path file, List<Measurement> results, PrintStream err) {
        try {
            Files.writeString(file, Measurement.jsonArray(results), StandardCharsets.UTF_8);
            return 0;
        } catch (IOException e) {
            err.println("tensorbus: cannot write " + file + ": " + e.getMessage());
            return 1;
        }
    }

    private static int runWorkload(String[] args, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "run needs a workload");
        }
        if (!args[0].equals("local-demo")) {
            return usage(err, "unknown workload '" + args[0] + "'");
        }
        try {
            FashionMnistTraining.main(Arrays.copyOfRange(args, 1, args.length));
            return 0;
        } catch (IllegalArgumentException e) {
            return usage(err, e.getMessage());
        } catch (java.io.IOException e) {
            err.println("tensorbus: " + e.getMessage());
            return 1;
        }
    }

    private static int usage(PrintStream err, String problem) {
        err.println("tensorbus: " + problem);
        err.println(USAGE_TEXT);
        return USAGE;
    }
}
