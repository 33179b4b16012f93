package io.tensorbus.workloads.bench;

import io.tensorbus.tensor.CpuInfo;
import io.tensorbus.workloads.cli.BenchCommand;
import io.tensorbus.workloads.cli.Console;
import io.tensorbus.workloads.cli.HelpOption;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A suite of {@code tensorbus bench}: its options are the subclass's fields, and this class prints the
 * measurements as they come, the CPU first, and writes them as JSON with {@code --json FILE}.
 */
public abstract class BenchSuite implements Callable<Integer> {
    @ParentCommand
    private BenchCommand bench;
    @Spec
    private CommandSpec spec;
    @Mixin
    private HelpOption help;
    @Option(names = "--json", paramLabel = "FILE", description = "also write the measurements to FILE, a JSON array")
    private Path json;

    /**
     * The run these options ask for, checked before anything is measured.
     *
     * @param sink takes each measurement
     * @param err where the ranks' messages go
     * @return the run, answering its exit status (0 when every measurement was taken)
     * @throws IllegalArgumentException for options out of range, naming the option
     */
    protected abstract IntSupplier suite(Consumer<Measurement> sink, PrintStream err);

    @Override
    public final Integer call() {
        Console console = bench.console();
        List<Measurement> results = new ArrayList<>();
        Consumer<Measurement> sink = m -> {
            console.out().println(m.line());
            console.out().flush();
            results.add(m);
        };
        IntSupplier run = suite(sink, console.err());
        sink.accept(Measurement.machine(CpuInfo.current()));
        int status = run.getAsInt();
        if (status != 0) {
            console.err().println("tensorbus: bench " + spec.name() + " failed (status " + status + ")");
            return status;
        }
        return json == null ? 0 : writeJson(json, results, console.err());
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
}
